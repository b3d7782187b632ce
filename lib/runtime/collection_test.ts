import { deepStrictEqual } from "node:assert/strict";
import { runUntil } from "../../tests/fakes/async.ts";
import { type CollectionReport, PeriodicCollection } from "./collection.ts";

Deno.test("PeriodicCollection collects every period until the signal aborts, and reports each", async () => {
  const reports: CollectionReport[] = [];
  let collections = 0;
  const collection = new PeriodicCollection({
    collect: () => collections++,
    periodMs: 5,
    onCollected: (report) => reports.push(report),
  });
  await runUntil(collection, () => collections >= 3);
  const seen = collections;
  await new Promise((resolve) => setTimeout(resolve, 20));
  deepStrictEqual(collections, seen, "no collection after the abort");
  deepStrictEqual(reports.length, collections);
  deepStrictEqual(reports.every((report) => report.ms >= 0), true);
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

Deno.test("shrinkWhenQuiet() shrinks once, after the first window with less CPU than the bound, and reports it", async () => {
  const done: string[] = [];
  const reports: CollectionReport[] = [];
  const collection = new PeriodicCollection({
    collect: () => done.push("collect"),
    shrink: () => done.push("shrink"),
    onCollected: (report) => reports.push(report),
  });
  // CPU used per window: 50 ms, 30 ms, then 5 ms.
  const readings = [0, 50, 50, 80, 80, 85];
  let reads = 0;
  const cpuMs = () => readings[Math.min(reads++, readings.length - 1)]!;
  await collection.shrinkWhenQuiet(new AbortController().signal, {
    cpuMs,
    windowMs: 1,
    quietCpuMs: 10,
  });
  deepStrictEqual(done, ["shrink"]);
  deepStrictEqual(reads, 6, "three windows were read");
  deepStrictEqual(reports.map((report) => report.kind), ["shrink"]);
});

Deno.test("shrinkWhenQuiet() gives up after maxMs of busy windows, and does nothing once aborted or without a shrink", async () => {
  const done: string[] = [];
  const collection = new PeriodicCollection({
    collect: () => done.push("collect"),
    shrink: () => done.push("shrink"),
  });
  let cpu = 0;
  const busy = () => (cpu += 100);
  await collection.shrinkWhenQuiet(new AbortController().signal, {
    cpuMs: busy,
    windowMs: 1,
    maxMs: 5,
  });
  deepStrictEqual(done.length, 0, "never quiet: no shrink");
  const stop = new AbortController();
  const aborted = collection.shrinkWhenQuiet(stop.signal, { cpuMs: () => 0, windowMs: 60_000 });
  stop.abort();
  await aborted;
  deepStrictEqual(done.length, 0, "no shrink after the abort");
  const collectOnly = new PeriodicCollection({ collect: () => done.push("collect") });
  await collectOnly.shrinkWhenQuiet(new AbortController().signal, { cpuMs: () => 0, windowMs: 1 });
  deepStrictEqual(done.length, 0, "no collection stands in for the shrink");
});
