import { deepStrictEqual } from "node:assert/strict";
import { runUntil } from "../../tests/fakes/async.ts";
import {
  type CollectionReport,
  grownPastLastCollection,
  PeriodicCollection,
} from "./collection.ts";

/** Holds the thread for `ms`, as a full collection does. */
function busyFor(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) { /* a collection's pause */ }
}

Deno.test("PeriodicCollection collects every period until the signal aborts, and reports each", async () => {
  const reports: CollectionReport[] = [];
  let collections = 0;
  const collection = new PeriodicCollection({
    collect: () => {
      busyFor(3);
      collections++;
    },
    periodMs: 5,
    onCollected: (report) => reports.push(report),
  });
  await runUntil(collection, () => collections >= 3);
  const seen = collections;
  await new Promise((resolve) => setTimeout(resolve, 20));
  deepStrictEqual(collections, seen, "no collection after the abort");
  deepStrictEqual(reports.length, collections);
  // Each report times its own collection: at least the 3 ms it held the thread.
  deepStrictEqual(reports.filter((report) => report.ms < 3 || report.kind !== "collection"), []);
});

Deno.test("PeriodicCollection.run() returns at once on an aborted signal", async () => {
  let collections = 0;
  const collection = new PeriodicCollection({ collect: () => collections++, periodMs: 1 });
  await collection.run(AbortSignal.abort());
  deepStrictEqual(collections, 0);
});

Deno.test("PeriodicCollection shrinks the footprint on every Nth collection and says which it did", async () => {
  const done: string[] = [];
  const reports: CollectionReport[] = [];
  const collection = new PeriodicCollection({
    collect: () => done.push("collect"),
    shrink: () => done.push("shrink"),
    shrinkEvery: 3,
    periodMs: 2,
    onCollected: (report) => reports.push(report),
  });
  await runUntil(collection, () => done.length >= 6);
  deepStrictEqual(done.slice(0, 6), [
    "collect",
    "collect",
    "shrink",
    "collect",
    "collect",
    "shrink",
  ]);
  deepStrictEqual(reports.slice(0, 6).map((report) => report.kind), [
    "collection",
    "collection",
    "shrink",
    "collection",
    "collection",
    "shrink",
  ]);
});

Deno.test("PeriodicCollection only collects where the runtime has no shrink", async () => {
  const reports: CollectionReport[] = [];
  const collection = new PeriodicCollection({
    collect: () => {},
    shrinkEvery: 1,
    periodMs: 1,
    onCollected: (report) => reports.push(report),
  });
  await runUntil(collection, () => reports.length >= 2);
  deepStrictEqual(reports.every((report) => report.kind === "collection"), true);
});

const MiB = 1024 * 1024;

Deno.test("grownPastLastCollection needs both twice the leftover and more than the floor", () => {
  const limits = { factor: 2, floorBytes: 8 * MiB };
  const cases: [usedMiB: number, leftMiB: number, grown: boolean][] = [
    [25, 12, true],
    [24, 12, false], // exactly twice: not past it
    [9, 4, false], // past twice, but only 5 MiB above the leftover
    [13, 4, true],
  ];
  for (const [usedMiB, leftMiB, grown] of cases) {
    const heap = { usedBytes: usedMiB * MiB, leftBytes: leftMiB * MiB };
    deepStrictEqual(grownPastLastCollection(heap, limits), grown, `${usedMiB} over ${leftMiB} MiB`);
  }
});

/** A heap that gains 1 MiB between reads and falls to `liveBytes` on a collection. */
function growingHeap(liveBytes: number) {
  let used = liveBytes;
  return {
    read: () => {
      const now = used;
      used += MiB;
      return now;
    },
    collect: () => {
      used = liveBytes;
    },
  };
}

/** A collection over growingHeap(4 MiB), read every 1 ms, collecting on growth above 2 MiB. */
function onGrowingHeap(periodMs: number) {
  const heap = growingHeap(4 * MiB);
  const reports: CollectionReport[] = [];
  const collection = new PeriodicCollection({
    collect: heap.collect,
    heapUsed: heap.read,
    checkMs: 1,
    periodMs,
    growthFloorBytes: 2 * MiB,
    onCollected: (report) => reports.push(report),
  });
  return { collection, reports };
}

/** The first `count` reports without their times, which vary from run to run. */
function withoutTimes(reports: CollectionReport[], count: number) {
  return reports.slice(0, count).map(({ kind, heapBeforeBytes, heapAfterBytes }) => ({
    kind,
    heapBeforeBytes,
    heapAfterBytes,
  }));
}

Deno.test("PeriodicCollection collects when the heap has doubled since the last collection, and reports before and after", async () => {
  const { collection, reports } = onGrowingHeap(1_000_000);
  await runUntil(collection, () => reports.length >= 2);
  deepStrictEqual(
    withoutTimes(reports, 2),
    [
      { kind: "growth", heapBeforeBytes: 9 * MiB, heapAfterBytes: 4 * MiB },
      { kind: "growth", heapBeforeBytes: 9 * MiB, heapAfterBytes: 4 * MiB },
    ],
  );
});

Deno.test("PeriodicCollection does not collect on growth below the floor, and still collects every period", async () => {
  const heap = growingHeap(4 * MiB);
  const reports: CollectionReport[] = [];
  let reads = 0;
  const collection = new PeriodicCollection({
    collect: heap.collect,
    heapUsed: () => (reads++, heap.read()),
    checkMs: 1,
    periodMs: 10,
    growthFloorBytes: 64 * MiB,
    onCollected: (report) => reports.push(report),
  });
  await runUntil(collection, () => reports.length >= 2);
  deepStrictEqual(reports.slice(0, 2).map((report) => report.kind), ["collection", "collection"]);
  deepStrictEqual(reads > 10, true, "the heap was read between periodic collections");
});

Deno.test("PeriodicCollection reports a shrink once its deferred work has run, and measures growth from what it left", async () => {
  let used = 20 * MiB;
  const reports: CollectionReport[] = [];
  const collection = new PeriodicCollection({
    collect: () => {
      used = 4 * MiB;
    },
    // As Bun.shrink(): the call returns first, the collection runs after.
    shrink: () => queueMicrotask(() => used = 4 * MiB),
    heapUsed: () => used,
    shrinkEvery: 1,
    checkMs: 1,
    periodMs: 3,
    growthFloorBytes: 2 * MiB,
    onCollected: (report) => {
      reports.push(report);
      if (report.kind === "shrink") used = 9 * MiB;
    },
  });
  await runUntil(collection, () => reports.length >= 2);
  deepStrictEqual(
    withoutTimes(reports, 2),
    [
      { kind: "shrink", heapBeforeBytes: 20 * MiB, heapAfterBytes: 4 * MiB },
      { kind: "growth", heapBeforeBytes: 9 * MiB, heapAfterBytes: 4 * MiB },
    ],
  );
});

Deno.test("PeriodicCollection counts the period from the last collection of either kind", async () => {
  // Grows past the floor every 5 reads; a period is 7 checks.
  const { collection, reports } = onGrowingHeap(7);
  await runUntil(collection, () => reports.length >= 3);
  deepStrictEqual(reports.slice(0, 3).map((report) => report.kind), ["growth", "growth", "growth"]);
});
