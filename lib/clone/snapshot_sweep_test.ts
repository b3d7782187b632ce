import { deepStrictEqual } from "node:assert/strict";
import type { Claim, VolumeSnapshot } from "../model/objects.ts";
import type { SweepApi } from "./ports.ts";
import type { sleep } from "../runtime/sleep.ts";
import { SnapshotSweep } from "./snapshot_sweep.ts";
import { claim, volumeSnapshot } from "../../tests/builders/provision.ts";
import { runUntil } from "../../tests/fakes/async.ts";
import { quiet } from "../../tests/fakes/logger.ts";
import { SNAPSHOT_SOURCE_PROTECTION_FINALIZER as PROTECTION } from "../model/keys.ts";

function sweepWorld(options: {
  served?: boolean[];
  mayList?: boolean;
  claims?: Claim[];
  intervalMs?: number;
  sleep?: typeof sleep;
} = {}) {
  const snapshots = [volumeSnapshot({ metadata: { name: "orphan", finalizers: [PROTECTION] } })];
  const writes: string[] = [];
  const served = [...(options.served ?? [true])];
  let cacheRuns = 0;
  const api: SweepApi = {
    snapshotsServed: () => Promise.resolve(served.length > 1 ? served.shift()! : served[0]!),
    mayListSnapshots: () => Promise.resolve(options.mayList ?? true),
    changeSnapshotFinalizer: (ref, change) => {
      writes.push(`${change.action} ${ref.namespace}/${ref.name} tries=${change.tries}`);
      snapshots.splice(0);
      return Promise.resolve("changed");
    },
  };
  const sweep = new SnapshotSweep({
    claims: { get: () => undefined, list: () => options.claims ?? [], onChange: () => {} },
    api,
    openSnapshotCache: () => ({
      list: () => snapshots,
      hasSynced: () => true,
      run: async (signal: AbortSignal) => {
        cacheRuns++;
        await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
      },
    }),
    logger: quiet,
  }, {
    intervalMs: options.intervalMs ?? 5,
    ...(options.sleep === undefined ? {} : { sleep: options.sleep }),
  });
  return { sweep, writes, cacheRuns: () => cacheRuns };
}

Deno.test("run() waits for the VolumeSnapshot API, then removes an orphan at its second sweep", async () => {
  const world = sweepWorld({ served: [false, false, true] });
  await runUntil(world.sweep, () => world.writes.length > 0);
  deepStrictEqual(world.writes, ["remove apps/orphan tries=1"]);
  deepStrictEqual(world.cacheRuns(), 1);
});

Deno.test("run() looks for the VolumeSnapshot API once per sweep interval, not every minute", async () => {
  const waits: number[] = [];
  const world = sweepWorld({
    served: [false, false, true],
    intervalMs: 5 * 60_000,
    sleep: (ms, signal) => {
      waits.push(ms);
      return new Promise((resolve) => setTimeout(() => resolve(!signal?.aborted), 0));
    },
  });
  await runUntil(world.sweep, () => world.writes.length > 0);
  // After each of the two looks that found nothing, then after the first sweep
  // (an orphan goes at its second): the sweep interval every time.
  deepStrictEqual(waits.slice(0, 3), [300_000, 300_000, 300_000]);
});

Deno.test("run() stays off without permission to list VolumeSnapshots", async () => {
  const world = sweepWorld({ mayList: false });
  await world.sweep.run(new AbortController().signal);
  deepStrictEqual([world.writes, world.cacheRuns()], [[], 0]);
});

Deno.test("sweep() keeps a protection a Pending restore needs", async () => {
  const restoring: Claim = claim({
    spec: {
      dataSource: { apiGroup: "snapshot.storage.k8s.io", kind: "VolumeSnapshot", name: "orphan" },
    },
  });
  const world = sweepWorld({ claims: [restoring] });
  const cache = {
    list: (): VolumeSnapshot[] => [
      volumeSnapshot({ metadata: { name: "orphan", finalizers: [PROTECTION] } }),
    ],
  };
  const signal = new AbortController().signal;
  for (let i = 0; i < 3; i++) await world.sweep.sweep(cache, signal);
  deepStrictEqual(world.writes, []);
});
