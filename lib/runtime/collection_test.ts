import { deepStrictEqual } from "node:assert/strict";
import { type CollectionReport, PeriodicCollection } from "./collection.ts";

Deno.test("PeriodicCollection collects every period until the signal aborts, and reports each", async () => {
  const reports: CollectionReport[] = [];
  let collections = 0;
  const collection = new PeriodicCollection({
    collect: () => collections++,
    periodMs: 5,
    onCollected: (report) => reports.push(report),
  });
  const stop = new AbortController();
  const running = collection.run(stop.signal);
  while (collections < 3) await new Promise((resolve) => setTimeout(resolve, 5));
  stop.abort();
  await running;
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
