import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import {
  describeRuns,
  describeSplit,
  describeThreads,
  MAIN_THREAD,
  readThreadGroups,
  threadGroup,
  threadSplit,
  totalOf,
  totalsBetween,
} from "./thread_split.ts";

Deno.test("threadGroup() drops a thread name's trailing number and keeps a name of only digits", () => {
  strictEqual(threadGroup("JITWorker3\n"), "JITWorker");
  strictEqual(threadGroup("HTTP Client\n"), "HTTP Client");
  strictEqual(threadGroup("Heap Helper #12"), "Heap Helper");
  strictEqual(threadGroup("1234"), "1234");
});

Deno.test("threadSplit() gives each group's CPU between readings, largest first, new groups whole", () => {
  const before = new Map([[MAIN_THREAD, 100], ["JITWorker", 50]]);
  const after = new Map([[MAIN_THREAD, 400], ["JITWorker", 150], ["Heap Helper", 100]]);
  deepStrictEqual(threadSplit(before, after), [
    { group: MAIN_THREAD, used: 300 },
    { group: "JITWorker", used: 100 },
    { group: "Heap Helper", used: 100 },
  ]);
});

Deno.test("threadSplit() sums groups under half a percent as other and leaves out idle ones", () => {
  const after = new Map([[MAIN_THREAD, 1000], ["a", 2], ["b", 2], ["idle", 0]]);
  deepStrictEqual(threadSplit(new Map(), after), [
    { group: MAIN_THREAD, used: 1000 },
    { group: "other", used: 4 },
  ]);
});

Deno.test("describeSplit() says the CPU per unit and each group's share", () => {
  const line = describeSplit(
    [{ group: MAIN_THREAD, used: 300 }, { group: "JITWorker", used: 100 }],
    {
      perUnit: 200,
      unit: "claim",
    },
  );
  strictEqual(line, "2.00 ms per claim: main thread 75%, JITWorker 25%");
  strictEqual(describeSplit([], { perUnit: 1, unit: "claim" }), "no CPU used");
  const small = describeSplit([{ group: MAIN_THREAD, used: 999 }, { group: "other", used: 1 }], {
    perUnit: 1,
    unit: "run",
  });
  strictEqual(small, "1000.00 ms per run: main thread 100%, other <1%");
});

Deno.test("readThreadGroups() of this process finds its main thread's CPU", () => {
  const cpu = readThreadGroups(Deno.pid).cpuMs;
  ok((cpu.get(MAIN_THREAD) ?? 0) > 0);
});

Deno.test("describeRuns() says the thread runs per unit, in all and by group, each with its preemptions", () => {
  const preempted = new Map([[MAIN_THREAD, 1200], ["HTTP Client", 200], ["JITWorker", 40]]);
  const line = describeRuns([
    { group: MAIN_THREAD, used: 2000 },
    { group: "HTTP Client", used: 1000 },
    { group: "other", used: 100 },
  ], { perUnit: 200, unit: "claim", preempted });
  strictEqual(
    line,
    "15.5 thread runs per claim (7.2 after a preemption): main thread 10.0 (6.0), " +
      "HTTP Client 5.0 (1.0), other 0.5 (0.2)",
  );
  strictEqual(
    describeRuns([], { perUnit: 1, unit: "claim", preempted: new Map() }),
    "no thread ran",
  );
});

Deno.test("totalsBetween() gives each group's growth, a new group's from 0", () => {
  const between = totalsBetween(
    new Map([[MAIN_THREAD, 10], ["HTTP Client", 4]]),
    new Map([[MAIN_THREAD, 25], ["HTTP Client", 4], ["Bun Pool", 3]]),
  );
  deepStrictEqual([...between], [[MAIN_THREAD, 15], ["HTTP Client", 0], ["Bun Pool", 3]]);
});

Deno.test("readThreadGroups() of this process reads each group's preemptions, never more than its runs", () => {
  const { runs, preempted } = readThreadGroups(Deno.pid);
  deepStrictEqual([...preempted.keys()], [...runs.keys()]);
  for (const [group, count] of preempted) {
    ok(Number.isInteger(count) && count >= 0, `${group}: ${count} preemptions`);
    ok(count <= (runs.get(group) ?? 0), `${group}: ${count} preemptions, ${runs.get(group)} runs`);
  }
});

Deno.test("readThreadGroups() of this process counts its threads' runs, which grow as a thread sleeps and wakes", async () => {
  // Summed over every thread: Deno may run this test's JavaScript on a thread other than the first.
  const runs = () => [...readThreadGroups(Deno.pid).runs.values()].reduce((sum, n) => sum + n, 0);
  const before = runs();
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setTimeout(resolve, 5));
  const after = runs();
  ok(before > 0);
  ok(after >= before + 3, `runs ${before} → ${after} over three sleeps`);
});

Deno.test("describeThreads() gives the CPU and the runs between two readings, with preemptions", () => {
  const before = {
    cpuMs: new Map([[MAIN_THREAD, 100]]),
    runs: new Map([[MAIN_THREAD, 10]]),
    preempted: new Map([[MAIN_THREAD, 2]]),
  };
  const after = {
    cpuMs: new Map([[MAIN_THREAD, 140], ["HTTP Client", 10]]),
    runs: new Map([[MAIN_THREAD, 30], ["HTTP Client", 10]]),
    preempted: new Map([[MAIN_THREAD, 12], ["HTTP Client", 0]]),
  };
  strictEqual(
    describeThreads(before, after, { perUnit: 10, unit: "s" }),
    "5.00 ms per s: main thread 80%, HTTP Client 20%; " +
      "3.0 thread runs per s (1.0 after a preemption): main thread 2.0 (1.0), HTTP Client 1.0 (0.0)",
  );
});

Deno.test("totalOf() sums every group, a growth below zero included", () => {
  strictEqual(totalOf(new Map()), 0);
  const grown = totalsBetween(
    new Map([[MAIN_THREAD, 10], ["HeapHelper", 8]]),
    new Map([[MAIN_THREAD, 15], ["HeapHelper", 6], ["JITWorker", 1]]),
  );
  strictEqual(totalOf(grown), 4);
});
