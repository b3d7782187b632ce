/**
 * Runs the standalone driver (main.ts) as a child process, the way the
 * cluster and benchmark set-ups do, and waits until its control socket
 * answers (which never touches the CSI call log).
 */
import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import type { DriverOptions } from "./config.ts";
import { DriverControl } from "./control_client.ts";
import { grpcTarget, removeSocketFile, requireSocketPath } from "./endpoint.ts";
import type { LogLevel } from "./flags.ts";

export interface SpawnOptions extends Omit<DriverOptions, "endpoint"> {
  /** Default: csi.sock in a new temporary directory, removed by stop(). */
  endpoint?: string;
  /** Default: control.sock beside a default endpoint, or in a new temporary directory. */
  controlEndpoint?: string;
  /** Default "deno" (node_modules/.bin/deno run -A); "bun" runs it with node_modules/.bin/bun. */
  runtime?: "deno" | "bun";
  /** Default "info". */
  logLevel?: LogLevel;
  /** Copy the child's stderr (its JSON log) to ours as well as keeping it; default false. */
  echoStderr?: boolean;
  /** How long to wait for the control socket to answer; default 30 s. */
  startTimeoutMs?: number;
  signal?: AbortSignal;
}

export interface SpawnedDriver {
  /** "unix:///abs/csi.sock". */
  endpoint: string;
  /** "unix:///abs/control.sock". */
  controlEndpoint: string;
  control: DriverControl;
  pid: number;
  /** Everything the child wrote to stderr so far (the last 1 MiB). */
  stderr(): string;
  /** Settles when the child has exited. */
  exited: Promise<{ code: number | null; signal: string | null }>;
  /** SIGTERM, then SIGKILL after timeoutMs (default 5 s); removes sockets and the temporary dir. */
  stop(options?: { timeoutMs?: number }): Promise<void>;
  /** SIGKILL, as a crash: the socket files stay behind (stop() still cleans up). */
  kill(): Promise<void>;
}

const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const MAIN = fileURLToPath(new URL("./main.ts", import.meta.url));
const STDERR_KEEP = 1 << 20;

/** The command line main.ts needs for these options. */
export function driverArgs(
  options: SpawnOptions & { endpoint: string; controlEndpoint: string },
): string[] {
  const args = [
    "--endpoint",
    options.endpoint,
    "--node-id",
    options.nodeId,
    "--control-endpoint",
    options.controlEndpoint,
  ];
  for (const pool of options.pools) {
    args.push("--capacity", `${pool.kind}=${pool.size}`);
    if (pool.maxVolumeSize !== undefined) {
      args.push("--max-volume-size", `${pool.kind}=${pool.maxVolumeSize}`);
    }
  }
  const optional: Array<[string, string | number | string[] | undefined]> = [
    ["--driver-name", options.driverName],
    ["--vendor-version", options.vendorVersion],
    ["--topology-key", options.topologyKey],
    ["--state-dir", options.stateDir],
    ["--controller-capabilities", options.controllerCapabilities],
    ["--plugin-capabilities", options.pluginCapabilities],
    ["--call-log-limit", options.callLogLimit],
    ["--log-level", options.logLevel],
    ["--volume-ids", options.volumeIds],
  ];
  for (const [flag, value] of optional) {
    if (value !== undefined) args.push(`${flag}=${Array.isArray(value) ? value.join(",") : value}`);
  }
  return args;
}

/** Starts main.ts in a child process and resolves once it serves; kills it if it does not. */
export async function spawnTestDriver(options: SpawnOptions): Promise<SpawnedDriver> {
  const tempDir = options.endpoint === undefined || options.controlEndpoint === undefined
    ? fs.mkdtempSync(path.join(os.tmpdir(), "csi-driver-"))
    : null;
  const socketPath = requireSocketPath(options.endpoint ?? path.join(tempDir ?? "", "csi.sock"));
  const controlPath = requireSocketPath(
    options.controlEndpoint ?? path.join(tempDir ?? "", "control.sock"),
  );
  const runtime = options.runtime ?? "deno";
  const binary = path.join(REPO_ROOT, "node_modules", ".bin", runtime);
  const command = runtime === "deno" ? ["run", "-A", MAIN] : ["run", MAIN];
  const args = [
    ...command,
    ...driverArgs({ ...options, endpoint: socketPath, controlEndpoint: controlPath }),
  ];
  const child = spawn(binary, args, { cwd: REPO_ROOT, stdio: ["ignore", "ignore", "pipe"] });
  const stderr = collectStderr(child, options.echoStderr === true);
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    child.once("close", (code, signal) => resolve({ code, signal }));
  });
  const cleanUp = () => {
    removeSocketFile(socketPath);
    removeSocketFile(controlPath);
    if (tempDir !== null) fs.rmSync(tempDir, { recursive: true, force: true });
  };
  const handle = processHandle(child, exited, cleanUp);
  const control = new DriverControl(controlPath, { timeoutMs: 2000 });
  try {
    await waitUntilServing(control, {
      exited,
      timeoutMs: options.startTimeoutMs ?? 30_000,
      signal: options.signal,
    });
  } catch (error: unknown) {
    await handle.kill();
    cleanUp();
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(
      `test driver did not start: ${reason}\n--- its stderr ---\n${stderr().slice(-4000)}`,
    );
  }
  return {
    endpoint: grpcTarget(socketPath),
    controlEndpoint: grpcTarget(controlPath),
    control: new DriverControl(controlPath),
    pid: child.pid ?? -1,
    stderr,
    exited,
    ...handle,
  };
}

function collectStderr(child: ChildProcess, echo: boolean): () => string {
  let text = "";
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (chunk: string) => {
    text = (text + chunk).slice(-STDERR_KEEP);
    if (echo) process.stderr.write(chunk);
  });
  return () => text;
}

function processHandle(
  child: ChildProcess,
  exited: Promise<unknown>,
  cleanUp: () => void,
): Pick<SpawnedDriver, "stop" | "kill"> {
  const running = () => child.exitCode === null && child.signalCode === null;
  // process.kill, not child.kill: Deno's child.kill() makes the exit read as
  // killed-by-signal even when the driver handled the signal and exited 0.
  const signal = (name: NodeJS.Signals) => {
    if (running() && child.pid !== undefined) process.kill(child.pid, name);
  };
  const kill = async () => {
    signal("SIGKILL");
    await exited;
  };
  const stop = async (options: { timeoutMs?: number } = {}) => {
    if (running()) {
      signal("SIGTERM");
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timedOut = new Promise<"timeout">((resolve) =>
        timer = setTimeout(() => resolve("timeout"), options.timeoutMs ?? 5000)
      );
      const outcome = await Promise.race([exited, timedOut]);
      clearTimeout(timer);
      if (outcome === "timeout") signal("SIGKILL");
    }
    await exited;
    cleanUp();
  };
  return { stop, kill };
}

async function waitUntilServing(
  control: DriverControl,
  options: {
    exited: Promise<{ code: number | null; signal: string | null }>;
    timeoutMs: number;
    signal: AbortSignal | undefined;
  },
): Promise<void> {
  const seen: { exit: { code: number | null; signal: string | null } | null } = { exit: null };
  void options.exited.then((info) => seen.exit = info);
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const exit = seen.exit;
    if (exit !== null) {
      throw new Error(
        `it exited with code ${exit.code ?? "none"}, signal ${exit.signal ?? "none"}`,
      );
    }
    if (options.signal?.aborted) throw new Error("the start was aborted");
    if (Date.now() > deadline) {
      throw new Error(`its control socket did not answer within ${options.timeoutMs} ms`);
    }
    try {
      await control.pools();
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
