/**
 * CPU of an agent split by thread, so that a run says where its CPU went
 * (the JavaScript thread, the JIT compiler's, the garbage collector's, the
 * HTTP client's) without a profiler attached, and how often each thread was
 * put on a CPU to spend it (its runs), and how many of those runs followed a
 * preemption rather than a wait. Read from the scheduler's clock and counts
 * of each live thread (process_stats.ts threadSchedstats() and
 * threadPreemptions()) and grouped by the thread's name
 * (/proc/<pid>/task/<tid>/comm) with its trailing number dropped
 * ("JITWorker3" and "JITWorker4" are one group). A thread that exits
 * between two readings takes its time with it: the split is of the threads
 * alive at the second reading, and the split's sum may fall short of what
 * /proc/<pid>/stat counts for the process.
 */
import { readFileSync } from "node:fs";
import { threadPreemptions, threadSchedstats } from "./process_stats.ts";

/** The process's first thread, which runs JavaScript in Bun and Go's runtime in upstream. */
export const MAIN_THREAD = "main thread";

/** A total per thread group at one moment (CPU ms, or runs). */
export type ThreadTotals = Map<string, number>;

/** Per thread group: CPU ms, runs, and the runs that followed a preemption. */
export interface ThreadGroups {
  cpuMs: ThreadTotals;
  runs: ThreadTotals;
  preempted: ThreadTotals;
}

/**
 * Every live thread of `pid` (threadSchedstats()) summed by group: its CPU
 * ms, and the times the scheduler put the group's threads on a CPU (their
 * runs: a wake-up after a wait, which costs CPU of its own in any runtime,
 * or a return after a preemption, which says more about the machine's load
 * and how long the thread runs than about how often it waits).
 */
export function readThreadGroups(pid: number): ThreadGroups {
  const groups: ThreadGroups = { cpuMs: new Map(), runs: new Map(), preempted: new Map() };
  for (const thread of threadSchedstats(pid)) {
    let name = MAIN_THREAD;
    let preempted: number;
    try {
      if (thread.tid !== pid) {
        name = threadGroup(readFileSync(`/proc/${pid}/task/${thread.tid}/comm`, "utf8"));
      }
      preempted = threadPreemptions(pid, thread.tid);
    } catch {
      continue; // The thread exited after its CPU was read.
    }
    add(groups.cpuMs, name, thread.seconds * 1000);
    add(groups.runs, name, thread.runs);
    add(groups.preempted, name, preempted);
  }
  return groups;
}

function add(totals: ThreadTotals, group: string, amount: number): void {
  totals.set(group, (totals.get(group) ?? 0) + amount);
}

/** "JITWorker3\n" → "JITWorker"; a name that is only digits stays as it is. */
export function threadGroup(comm: string): string {
  const name = comm.trim();
  const stripped = name.replace(/[\s#:_-]*\d+$/, "");
  return stripped === "" ? name : stripped;
}

/**
 * What each group used between two readings (CPU ms, or runs), largest
 * first; groups under 0.5% of the whole are summed as "other".
 */
export function threadSplit(before: ThreadTotals, after: ThreadTotals): ThreadUse[] {
  const used = [...totalsBetween(before, after)].map(([group, used]) => ({ group, used }))
    .filter((entry) => entry.used > 0)
    .sort((a, b) => b.used - a.used);
  const total = totalUsed(used);
  const kept = used.filter((entry) => entry.used >= total * 0.005);
  const rest = total - totalUsed(kept);
  return rest > 0 ? [...kept, { group: "other", used: rest }] : kept;
}

/** One group's share of a split. */
export interface ThreadUse {
  group: string;
  used: number;
}

/**
 * One line per run: "1.23 ms per claim: main thread 55%, JITWorker 20%, ...".
 * `perUnit` divides the ms (claims, for a per-claim figure).
 */
export function describeSplit(
  split: readonly ThreadUse[],
  options: { perUnit: number; unit: string },
): string {
  const total = totalUsed(split);
  if (total === 0) return "no CPU used";
  const share = (ms: number) => {
    const percent = Math.round((ms / total) * 100);
    return percent === 0 ? "<1%" : `${percent}%`;
  };
  const shares = split.map((entry) => `${entry.group} ${share(entry.used)}`);
  return `${(total / options.perUnit).toFixed(2)} ms per ${options.unit}: ${shares.join(", ")}`;
}

/**
 * One line per run of a split of runs (threadSplit() of two `runs`
 * readings), each figure followed by how many of those runs followed a
 * preemption (`preempted`: each group's count between the same readings,
 * "other" taking what the named groups do not): "31.2 thread runs per
 * claim (12.0 after a preemption): main thread 20.1 (10.5), ...".
 */
export function describeRuns(
  split: readonly ThreadUse[],
  options: { perUnit: number; unit: string; preempted: ThreadTotals },
): string {
  const total = totalUsed(split);
  if (total === 0) return "no thread ran";
  const per = (count: number) => (count / options.perUnit).toFixed(1);
  const preempted = preemptionsBySplitGroup(split, options.preempted);
  const groups = split.map((entry) =>
    `${entry.group} ${per(entry.used)} (${per(preempted.of(entry.group))})`
  );
  const head = `${per(total)} thread runs per ${options.unit}`;
  return `${head} (${per(preempted.all)} after a preemption): ${groups.join(", ")}`;
}

/**
 * Between two readings of readThreadGroups(): "CPU line; runs line"
 * (describeSplit(), describeRuns() with each group's preemptions).
 */
export function describeThreads(
  before: ThreadGroups,
  after: ThreadGroups,
  options: { perUnit: number; unit: string },
): string {
  const cpu = describeSplit(threadSplit(before.cpuMs, after.cpuMs), options);
  const runs = describeRuns(threadSplit(before.runs, after.runs), {
    ...options,
    preempted: totalsBetween(before.preempted, after.preempted),
  });
  return `${cpu}; ${runs}`;
}

/** All groups' preemptions, and a split group's: "other" takes what the named groups do not. */
function preemptionsBySplitGroup(
  split: readonly ThreadUse[],
  preempted: ThreadTotals,
): { all: number; of(group: string): number } {
  const all = totalOf(preempted);
  const named = split.filter((entry) => entry.group !== "other")
    .reduce((sum, entry) => sum + (preempted.get(entry.group) ?? 0), 0);
  return { all, of: (group) => group === "other" ? all - named : preempted.get(group) ?? 0 };
}

/** The sum over every group (a reading's, or totalsBetween()'s growth). */
export function totalOf(totals: ThreadTotals): number {
  return [...totals.values()].reduce((sum, amount) => sum + amount, 0);
}

/** Each group's growth between two readings (a group new at `after` grows from 0). */
export function totalsBetween(before: ThreadTotals, after: ThreadTotals): ThreadTotals {
  return new Map([...after].map(([group, total]) => [group, total - (before.get(group) ?? 0)]));
}

function totalUsed(split: readonly ThreadUse[]): number {
  return split.reduce((sum, entry) => sum + entry.used, 0);
}
