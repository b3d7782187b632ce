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
