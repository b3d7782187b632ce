/**
 * CPU of an agent split by thread, so that a run says where its CPU went
 * (the JavaScript thread, the JIT compiler's, the garbage collector's, the
 * HTTP client's) without a profiler attached. Read from the scheduler's clock
 * of each live thread (/proc/<pid>/task/<tid>/schedstat) and grouped by the
 * thread's name (/proc/<pid>/task/<tid>/comm) with its trailing number
 * dropped ("JITWorker3" and "JITWorker4" are one group). A thread that exits
 * between two readings takes its time with it: the split is of the threads
 * alive at the second reading, and the split's sum may fall short of what
 * /proc/<pid>/stat counts for the process.
 */
import { readFileSync } from "node:fs";
import { threadCpuSeconds } from "./process_stats.ts";

/** The process's first thread, which runs JavaScript in Bun and Go's runtime in upstream. */
export const MAIN_THREAD = "main thread";

/** CPU ms per thread group at one moment. */
export type ThreadCpu = Map<string, number>;

/** Reads every live thread of `pid` (threadCpuSeconds()) and sums their CPU ms by group. */
export function readThreadCpu(pid: number): ThreadCpu {
  const groups: ThreadCpu = new Map();
  for (const { tid, seconds } of threadCpuSeconds(pid)) {
    let name = MAIN_THREAD;
    if (tid !== pid) {
      try {
        name = threadGroup(readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8"));
      } catch {
        continue; // The thread exited after its CPU was read.
      }
    }
    groups.set(name, (groups.get(name) ?? 0) + seconds * 1000);
  }
  return groups;
}

/** "JITWorker3\n" → "JITWorker"; a name that is only digits stays as it is. */
export function threadGroup(comm: string): string {
  const name = comm.trim();
  const stripped = name.replace(/[\s#:_-]*\d+$/, "");
  return stripped === "" ? name : stripped;
}

/** CPU ms each group used between two readings, largest first; groups under 0.5% are summed as "other". */
export function threadSplit(before: ThreadCpu, after: ThreadCpu): { group: string; ms: number }[] {
  const used = [...after].map(([group, ms]) => ({ group, ms: ms - (before.get(group) ?? 0) }))
    .filter((entry) => entry.ms > 0)
    .sort((a, b) => b.ms - a.ms);
  const total = used.reduce((sum, entry) => sum + entry.ms, 0);
  const kept = used.filter((entry) => entry.ms >= total * 0.005);
  const rest = total - kept.reduce((sum, entry) => sum + entry.ms, 0);
  return rest > 0 ? [...kept, { group: "other", ms: rest }] : kept;
}

/**
 * One line per run: "1.23 ms per claim: main thread 55%, JITWorker 20%, ...".
 * `perUnit` divides the ms (claims, for a per-claim figure).
 */
export function describeSplit(
  split: readonly { group: string; ms: number }[],
  options: { perUnit: number; unit: string },
): string {
  const total = split.reduce((sum, entry) => sum + entry.ms, 0);
  if (total === 0) return "no CPU used";
  const share = (ms: number) => {
    const percent = Math.round((ms / total) * 100);
    return percent === 0 ? "<1%" : `${percent}%`;
  };
  const shares = split.map((entry) => `${entry.group} ${share(entry.ms)}`);
  return `${(total / options.perUnit).toFixed(2)} ms per ${options.unit}: ${shares.join(", ")}`;
}
