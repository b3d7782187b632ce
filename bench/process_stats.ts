/** Resource use of a running process, read from /proc (Linux). */
import { readdirSync, readFileSync } from "node:fs";

function statusKiB(pid: number, field: "VmRSS" | "VmHWM"): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const match = new RegExp(`^${field}:\\s+(\\d+)\\s+kB$`, "m").exec(status);
  if (match === null) throw new Error(`no ${field} for pid ${pid}`);
  return Number(match[1]);
}

/** Resident set size in MiB (VmRSS). */
export function residentMiB(pid: number): number {
  return statusKiB(pid, "VmRSS") / 1024;
}

/** The largest resident set size the process has had so far, in MiB (VmHWM). */
export function peakResidentMiB(pid: number): number {
  return statusKiB(pid, "VmHWM") / 1024;
}

/** /proc/<pid>/stat's fields after the parenthesized command: field N (1-based) is [N - 3]. */
function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/**
 * CPU seconds (user + system) the process has used so far, all threads
 * included. The kernel counts in clock ticks of 10 ms (USER_HZ = 100).
 */
export function cpuSeconds(pid: number): number {
  const fields = statFields(pid);
  // utime and stime are fields 14 and 15.
  const ticks = Number(fields[11]) + Number(fields[12]);
  return ticks / 100;
}

/**
 * Page faults of the process so far, all threads included (minflt and
 * majflt, fields 10 and 12): minor ones map a page already in memory (for
 * the executable: in the page cache), major ones wait for the disk.
 */
export function pageFaults(pid: number): { minor: number; major: number } {
  const fields = statFields(pid);
  return { minor: Number(fields[7]), major: Number(fields[9]) };
}

/** One live thread's scheduler counts (threadSchedstats()). */
export interface ThreadSchedstat {
  tid: number;
  seconds: number;
  runs: number;
}

/**
 * CPU seconds each live thread of the process has run, from the scheduler's
 * nanosecond clock (/proc/<pid>/task/<tid>/schedstat, first field), and how
 * many times the scheduler has put it on a CPU (third field): each wake-up
 * of a thread that slept, and each return after it was preempted (those
 * counted apart by threadPreemptions()). A thread that exits between the
 * listing and the read is left out.
 */
export function threadSchedstats(pid: number): ThreadSchedstat[] {
  const threads: ThreadSchedstat[] = [];
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const fields = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ");
      threads.push({
        tid: Number(tid),
        seconds: Number(fields[0]) / 1e9,
        runs: Number(fields[2]),
      });
    } catch {
      // The thread exited between the listing and the read.
    }
  }
  return threads;
}

/**
 * How many of a thread's runs followed a preemption rather than a wait
 * (/proc/<pid>/task/<tid>/status, `nonvoluntary_ctxt_switches`; NaN where
 * the kernel does not say). Throws when the thread has exited. Read apart
 * from threadSchedstats(), so that the start-up's CPU reading at ready does
 * not wait for a file per thread it does not use.
 */
export function threadPreemptions(pid: number, tid: number): number {
  const status = readFileSync(`/proc/${pid}/task/${tid}/status`, "utf8");
  return Number(/^nonvoluntary_ctxt_switches:\s+(\d+)$/m.exec(status)?.[1] ?? NaN);
}

/**
 * CPU seconds the process's live threads have run (threadSchedstats()):
 * fine enough for a start-up of a few tens of milliseconds, where
 * cpuSeconds() moves in steps of 10 ms. Threads that have already exited are
 * not counted (their time is in cpuSeconds()).
 */
export function cpuSecondsFine(pid: number): number {
  return threadSchedstats(pid).reduce((sum, thread) => sum + thread.seconds, 0);
}

/**
 * The resident set split by what backs it, in MiB, from /proc/<pid>/smaps_rollup:
 * `anonymous` is the heap, stacks and other private memory; `file` is pages of
 * mapped files, mostly the executable's own code and (for a compiled Bun
 * program) its embedded bytecode: clean pages the kernel can drop and reread.
 */
export function residentSplitMiB(pid: number): { anonymous: number; file: number } {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
  const field = (name: string) => {
    const match = new RegExp(`^${name}:\\s+(\\d+)\\s+kB$`, "m").exec(rollup);
    if (match === null) throw new Error(`no ${name} in smaps_rollup of pid ${pid}`);
    return Number(match[1]) / 1024;
  };
  const anonymous = field("Anonymous");
  return { anonymous, file: field("Rss") - anonymous };
}
