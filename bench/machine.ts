/** The machine a benchmark ran on, for the results file: results mean little without it. */
import { cpus, loadavg, release, totalmem } from "node:os";

export interface MachineInfo {
  cpuModel: string;
  cpus: number;
  memoryGiB: number;
  kernel: string;
  /** 1, 5 and 15 minute load averages when the scenario started. */
  loadBefore: number[];
}

export function machineInfo(): MachineInfo {
  const list = cpus();
  return {
    cpuModel: list[0]?.model.trim() ?? "unknown",
    cpus: list.length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    kernel: release(),
    loadBefore: loadAverage(),
  };
}

export function loadAverage(): number[] {
  return loadavg().map((value) => Math.round(value * 100) / 100);
}

/** "2 × Intel(R) Xeon(R) ..., 24 GiB, Linux 6.8.0" */
export function describeMachine(machine: MachineInfo): string {
  return `${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, Linux ${machine.kernel}`;
}
