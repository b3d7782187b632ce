/** Resource use of a running process, read from /proc (Linux). */
import { readFileSync } from "node:fs";

/** Resident set size in MiB (VmRSS). */
export function residentMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  if (match === null) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(match[1]) / 1024;
}

/** CPU seconds (user + system) the process has used so far. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the parenthesized command; utime and stime are fields 14 and 15 (1-based).
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  return ticks / 100;
}
