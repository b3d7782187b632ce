import { deepStrictEqual } from "node:assert/strict";
import { Registry } from "prom-client";
import { parseConfig } from "../config/config.ts";
import type { Config } from "../config/types.ts";
import type { DriverInfo } from "../csi/handshake.ts";
import type { ControllerCapabilityType } from "../csi/types.ts";
import type { Claim } from "../model/objects.ts";
import { createWorkQueueMetrics } from "../queue/work/prometheus_metrics.ts";
import { Lifecycle } from "../runtime/lifecycle.ts";
import type { ClaimChange, CloneApi, SweepApi } from "./ports.ts";
import { startProtection } from "./start.ts";
import { sourceClaim, sourceVolume } from "../../tests/builders/provision.ts";
import { eventually, flush } from "../../tests/fakes/async.ts";
import { quiet } from "../../tests/fakes/logger.ts";
import { CLONE_PROTECTION_FINALIZER as CLONE } from "../model/keys.ts";

function config(flags: string[]): Config {
  const outcome = parseConfig(
    ["--node-deployment", "--csi-address=/csi/csi.sock", ...flags],
    { NODE_NAME: "node-a" },
  );
  if (outcome.kind !== "run") throw new Error(`bad flags: ${JSON.stringify(outcome)}`);
  return outcome.config;
}

function driver(capabilities: ControllerCapabilityType[]): DriverInfo {
  return {
    name: "hostpath.csi.k8s.io",
    vendorVersion: "1",
    pluginCapabilities: new Set(["CONTROLLER_SERVICE"]),
    controllerCapabilities: new Set(["CREATE_DELETE_VOLUME", ...capabilities]),
    nodeId: "node-a",
    segment: {},
  };
}

/** Two deleted source claims on this node whose finalizer writes wait for the test's word. */
function world() {
  const deleted = (name: string): Claim =>
    sourceClaim({
      metadata: { name, deletionTimestamp: "2025-01-01T00:00:00Z", finalizers: [CLONE] },
      spec: { volumeName: `pv-${name}` },
    });
  const claims = new Map([["apps/a", deleted("a")], ["apps/b", deleted("b")]]);
  const handlers: ((change: ClaimChange) => void)[] = [];
  const log: string[] = [];
  const pending: (() => void)[] = [];
  let sweepAsked = 0;
  const api: CloneApi & SweepApi = {
    changeClaimFinalizer: (ref) => {
      log.push(`start ${ref.name}`);
      return new Promise((resolve) =>
        pending.push(() => {
          log.push(`end ${ref.name}`);
          resolve("patched");
        })
      );
    },
    snapshotsServed: () => Promise.resolve(true),
    mayListSnapshots: () => {
      sweepAsked++;
      return Promise.resolve(false);
    },
    changeSnapshotFinalizer: () => Promise.resolve("unchanged"),
  };
  const parts = (flags: string[], capabilities: ControllerCapabilityType[]) => ({
    config: config(flags),
    driver: driver(capabilities),
    claims: {
      get: (key: string) => claims.get(key),
      list: () => [...claims.values()],
      onChange: (handler: (change: ClaimChange) => void) => handlers.push(handler),
    },
    volumes: { get: () => sourceVolume() },
    api,
    openSnapshotCache: () => {
      throw new Error("not listed");
    },
    queues: createWorkQueueMetrics(new Registry()),
    logger: quiet,
  });
  const touchAll = () => {
    for (const [key, claim] of claims) {
      for (const handler of handlers) handler({ key, old: undefined, new: claim });
    }
  };
  return { parts, handlers, log, pending, touchAll, sweepAsked: () => sweepAsked };
}

async function withLife(body: (life: Lifecycle) => Promise<void> | void): Promise<void> {
  const life = new Lifecycle(quiet);
  try {
    await body(life);
  } finally {
    await life.close();
  }
}

Deno.test("startProtection() runs --cloning-protection-threads workers at once", async () => {
  await withLife(async (life) => {
    const w = world();
    startProtection(w.parts(["--cloning-protection-threads=2"], ["CLONE_VOLUME"]), life)();
    w.touchAll();
    await eventually(() => w.log.length === 2, "two finalizer writes at once");
    deepStrictEqual(w.log.sort(), ["start a", "start b"]);
    for (const release of w.pending.splice(0)) release();
  });
});

Deno.test("startProtection() with one thread removes one finalizer after the other", async () => {
  await withLife(async (life) => {
    const w = world();
    startProtection(w.parts(["--cloning-protection-threads=1"], ["CLONE_VOLUME"]), life)();
    w.touchAll();
    await eventually(() => w.pending.length === 1, "the first finalizer write");
    // A second worker, were there one, would have taken the other key by now.
    await flush(10);
    w.pending.shift()!();
    await eventually(() => w.pending.length === 1, "the second finalizer write");
    w.pending.shift()!();
    deepStrictEqual(w.log.map((line) => line.split(" ")[0]), ["start", "end", "start", "end"]);
  });
});

Deno.test("startProtection() starts no cloning-protection controller without CLONE_VOLUME", async () => {
  await withLife((life) => {
    const w = world();
    startProtection(w.parts([], ["CREATE_DELETE_SNAPSHOT"]), life)();
    deepStrictEqual(w.handlers.length, 0);
  });
});

Deno.test("startProtection() sweeps only with CREATE_DELETE_SNAPSHOT and a non-zero interval", async () => {
  for (
    const [flags, capabilities, sweeps] of [
      [["--snapshot-orphan-sweep-interval=1s"], ["CREATE_DELETE_SNAPSHOT"], true],
      [["--snapshot-orphan-sweep-interval=0"], ["CREATE_DELETE_SNAPSHOT"], false],
      [["--snapshot-orphan-sweep-interval=1s"], ["CLONE_VOLUME"], false],
    ] as [string[], ControllerCapabilityType[], boolean][]
  ) {
    await withLife(async (life) => {
      const w = world();
      startProtection(w.parts(flags, capabilities), life)();
      if (sweeps) await eventually(() => w.sweepAsked() === 1, "the sweep's permission check");
      // The sweep asks for its permission first thing when it runs.
      await flush();
      deepStrictEqual(w.sweepAsked(), sweeps ? 1 : 0, JSON.stringify(flags.concat(capabilities)));
    });
  }
});
