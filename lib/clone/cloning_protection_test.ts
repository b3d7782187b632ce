import { deepStrictEqual } from "node:assert/strict";
import type { Claim } from "../model/objects.ts";
import { CloningProtectionController } from "./cloning_protection.ts";
import { STAND_IN_DELAY_MS } from "./decide.ts";
import { claim, sourceClaim, sourceVolume } from "../../tests/builders/provision.ts";
import { quiet } from "../../tests/fakes/logger.ts";
import { CLONE_PROTECTION_FINALIZER as CLONE } from "../model/keys.ts";

const signal = new AbortController().signal;
const deleted = sourceClaim({
  metadata: { deletionTimestamp: "2025-01-01T00:00:00Z", finalizers: [CLONE] },
});
const clone = (phase: string): Claim => ({
  ...claim({ spec: { dataSource: { kind: "PersistentVolumeClaim", name: "origin" } } }),
  status: { phase },
});

function controller(claims: Claim[], options: { holds?: boolean; now?: () => number } = {}) {
  const byKey = new Map(claims.map((c) => [`${c.metadata.namespace}/${c.metadata.name}`, c]));
  const removed: string[] = [];
  const volume = sourceVolume();
  const protection = new CloningProtectionController({
    claims: { get: (key) => byKey.get(key), list: () => [...byKey.values()], onChange: () => {} },
    volumes: {
      get: (name) => (options.holds ?? true) && name === "pv-origin" ? volume : undefined,
    },
    api: {
      changeClaimFinalizer: (ref, change) => {
        removed.push(`${change.action} ${ref.namespace}/${ref.name}`);
        return Promise.resolve("patched");
      },
    },
    logger: quiet,
    ...(options.now ? { now: options.now } : {}),
  });
  return { protection, removed, byKey };
}

Deno.test("keysFor(): a deleted source claim, and the source of a clone that changed", () => {
  deepStrictEqual(
    CloningProtectionController.keysFor({ key: "apps/origin", old: undefined, new: deleted }),
    ["apps/origin"],
  );
  // The clone is bound: its source is looked at again.
  deepStrictEqual(
    CloningProtectionController.keysFor({
      key: "apps/data",
      old: clone("Pending"),
      new: clone("Bound"),
    }),
    ["apps/origin"],
  );
  deepStrictEqual(
    CloningProtectionController.keysFor({ key: "apps/x", old: undefined, new: claim() }),
    [],
  );
});

Deno.test("sync() waits while a clone is Pending, then removes the finalizer", async () => {
  const world = controller([deleted, clone("Pending")]);
  deepStrictEqual(await world.protection.sync("apps/origin", signal), { kind: "retry" });
  deepStrictEqual(world.removed, []);
  world.byKey.set("apps/data", clone("Bound"));
  deepStrictEqual(await world.protection.sync("apps/origin", signal), { kind: "done" });
  deepStrictEqual(world.removed, ["remove apps/origin"]);
});

Deno.test("sync() on a node that does not hold the source stands in after the delay", async () => {
  let now = 1000;
  const world = controller([deleted], { holds: false, now: () => now });
  deepStrictEqual(await world.protection.sync("apps/origin", signal), {
    kind: "retryAfter",
    ms: STAND_IN_DELAY_MS,
  });
  now += 10_000;
  deepStrictEqual(await world.protection.sync("apps/origin", signal), {
    kind: "retryAfter",
    ms: STAND_IN_DELAY_MS - 10_000,
  });
  now += STAND_IN_DELAY_MS;
  deepStrictEqual(await world.protection.sync("apps/origin", signal), { kind: "done" });
  deepStrictEqual(world.removed, ["remove apps/origin"]);
});
