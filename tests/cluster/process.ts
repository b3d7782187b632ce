/**
 * Child processes of the test cluster: each one writes stdout and stderr to its
 * own log file, is tracked by a ProcessGroup, and is stopped with SIGTERM, then
 * SIGKILL after a deadline.
 *
 * The shell does the log redirection (`exec ... >>log 2>&1`) so that the
 * process writes to the file itself: no pipe through this Deno process that
 * could fill up, stall the child, or leak as an open resource in tests.
 * `setpriv --pdeathsig KILL` (util-linux) makes the kernel kill the child when
 * this process dies without running its cleanup (e.g. a SIGKILLed test run).
 */

import { existsSync } from "node:fs";

export interface SpawnOptions {
  /** Short name shown in log tails and errors, e.g. "kube-apiserver". */
  name: string;
  command: string;
  args: string[];
  /** Appended to, created if missing. */
  logFile: string;
  /** Added to this process's environment. */
  env?: Record<string, string>;
  cwd?: string;
}

export interface StopOptions {
  /** How long to wait after SIGTERM before SIGKILL. */
  graceMs?: number;
}

const SETPRIV = "/usr/bin/setpriv";
const DEFAULT_GRACE_MS = 5_000;

/** A running (or finished) child process with its own log file. */
export class ManagedProcess {
  readonly name: string;
  readonly logFile: string;
  readonly pid: number;
  readonly command: string;
  readonly args: readonly string[];
  /** What it was spawned with: ProcessGroup.respawn() starts the same again. */
  readonly spawnOptions: SpawnOptions;
  /** Resolves once the process has exited, with its status. */
  readonly exited: Promise<Deno.CommandStatus>;
  #status: Deno.CommandStatus | undefined;
  #child: Deno.ChildProcess;

  constructor(child: Deno.ChildProcess, options: SpawnOptions) {
    this.#child = child;
    this.name = options.name;
    this.logFile = options.logFile;
    this.command = options.command;
    this.args = options.args;
    this.spawnOptions = options;
    this.pid = child.pid;
    this.exited = child.status.then((status) => (this.#status = status));
  }

  /** Undefined while the process runs. */
  get status(): Deno.CommandStatus | undefined {
    return this.#status;
  }

  get running(): boolean {
    return this.#status === undefined;
  }

  /** Sends a signal; a process that already exited is left alone. */
  signal(signal: Deno.Signal): void {
    if (!this.running) return;
    try {
      this.#child.kill(signal);
    } catch (error) {
      // It may have exited between the check and the kill.
      if (!(error instanceof TypeError) && !(error instanceof Deno.errors.NotFound)) throw error;
    }
  }

  /** SIGKILL, then wait for the exit. */
  async kill(): Promise<Deno.CommandStatus> {
    this.signal("SIGKILL");
    return await this.exited;
  }

  /** SIGTERM, SIGKILL after `graceMs`, then wait for the exit. */
  async stop(options: StopOptions = {}): Promise<Deno.CommandStatus> {
    if (!this.running) return await this.exited;
    this.signal("SIGTERM");
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), options.graceMs ?? DEFAULT_GRACE_MS);
    });
    try {
      const first = await Promise.race([this.exited, deadline]);
      if (first === "timeout") this.signal("SIGKILL");
    } finally {
      clearTimeout(timer);
    }
    return await this.exited;
  }
}

/** Starts a process whose output goes to `options.logFile`. */
export function spawnLogged(options: SpawnOptions): ManagedProcess {
  // $1 is the log file; the rest is the command line, exec'd in place of the
  // shell so that the pid we track is the program itself.
  const script = 'log="$1"; shift; exec "$@" >>"$log" 2>&1';
  const prefix = existsSync(SETPRIV) ? [SETPRIV, "--pdeathsig", "KILL", "--"] : [];
  const command = new Deno.Command("/bin/sh", {
    args: ["-c", script, "sh", options.logFile, ...prefix, options.command, ...options.args],
    env: options.env ?? {},
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    stdin: "null",
    stdout: "null",
    stderr: "null",
  });
  return new ManagedProcess(command.spawn(), options);
}

/** The last `lines` lines of a log file; "" when it does not exist. */
export async function tailFile(path: string, lines = 50): Promise<string> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return "";
    throw error;
  }
  const all = text.trimEnd().split("\n");
  return all.slice(Math.max(0, all.length - lines)).join("\n");
}

/**
 * Everything a cluster started, so that it can all be stopped in reverse
 * order of start, whatever failed in between.
 */
export class ProcessGroup {
  #processes: ManagedProcess[] = [];

  spawn(options: SpawnOptions): ManagedProcess {
    const process = spawnLogged(options);
    this.#processes.push(process);
    return process;
  }

  /**
   * Starts an exited `process` again with the same command line, environment
   * and log file (after a marker line). The new process takes the old one's
   * place in the group, so that stopAll() keeps the start order (an API
   * server restarted after the agents is still stopped after them).
   */
  async respawn(process: ManagedProcess, marker: string): Promise<ManagedProcess> {
    if (process.running) throw new Error(`${process.name} (pid ${process.pid}) still runs`);
    const line = `\n===== cluster: ${marker} at ${new Date().toISOString()}\n`;
    await Deno.writeTextFile(process.logFile, line, { append: true });
    const fresh = spawnLogged(process.spawnOptions);
    const index = this.#processes.indexOf(process);
    if (index >= 0) this.#processes[index] = fresh;
    else this.#processes.push(fresh);
    return fresh;
  }

  /** Every process ever spawned here, in start order (running or not). */
  get processes(): readonly ManagedProcess[] {
    return this.#processes;
  }

  /** Stops every process, last started first. Never throws. */
  async stopAll(options: StopOptions = {}): Promise<void> {
    for (const process of [...this.#processes].reverse()) {
      try {
        await process.stop(options);
      } catch (error) {
        console.error(`stopping ${process.name} (pid ${process.pid}) failed:`, error);
      }
    }
  }

  /** One block per log file: a header and its last `lines` lines. */
  async tailLogs(lines = 50): Promise<string> {
    const seen = new Set<string>();
    const blocks: string[] = [];
    for (const process of this.#processes) {
      if (seen.has(process.logFile)) continue;
      seen.add(process.logFile);
      const state = process.running ? "running" : `exited ${process.status?.code}`;
      const tail = await tailFile(process.logFile, lines);
      blocks.push(
        `===== ${process.name} (pid ${process.pid}, ${state}) ${process.logFile}\n${tail}`,
      );
    }
    return blocks.join("\n");
  }
}

/** What a command printed and its exit code. */
export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command to its end, whatever its exit code, for tests that assert
 * the code and the output. `env` alone is its environment: the test says
 * exactly what the command sees.
 */
export async function runCapturing(
  command: string,
  args: string[],
  env: Record<string, string>,
): Promise<CommandResult> {
  const output = await new Deno.Command(command, {
    args,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

/** Runs a command to its end; resolves to stdout, throws with its exit code and stderr on failure. */
export async function runCommand(
  command: string,
  args: string[],
  options: { stdin?: string; cwd?: string } = {},
): Promise<string> {
  const child = new Deno.Command(command, {
    args,
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (options.stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(options.stdin));
    await writer.close();
  }
  const output = await child.output();
  const decoder = new TextDecoder();
  if (!output.success) {
    throw new Error(
      `${command} ${args.join(" ")} failed (exit ${output.code}):\n${
        decoder.decode(output.stderr)
      }`,
    );
  }
  return decoder.decode(output.stdout);
}
