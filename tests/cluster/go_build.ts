/**
 * One `go build -v` of several main packages, with progress: `-v` prints each
 * package as it is compiled, which is summarized as a count every
 * PROGRESS_EVERY packages, plus a heartbeat while the (silent) link runs.
 */

import { existsSync } from "node:fs";

export interface BuildProgress {
  compiledPackages: number;
  elapsedSeconds: number;
  message: string;
}

export interface GoBuildOptions {
  toolsDir: string;
  outDir: string;
  packages: string[];
  /** Stamped with -ldflags -X so `--version` output is meaningful. */
  versions: { kubernetes: string; provisioner?: string };
  /** Replaces the -ldflags built from `versions` (for other tools modules, e.g. ../helm). */
  ldflags?: string;
  env: Record<string, string | undefined>;
  /** Added to the go command's environment (e.g. GOFLAGS, GOPROXY for an offline build). */
  goEnv?: Record<string, string>;
  onProgress: (progress: BuildProgress) => void;
  signal?: AbortSignal;
}

const PROGRESS_EVERY = 100;
const HEARTBEAT_MS = 20_000;
const ERROR_TAIL_LINES = 60;

/** `go` from GO / PATH, else the standard install location. */
export function goBinary(env: Record<string, string | undefined>): string {
  if (env.GO) return env.GO;
  for (const dir of (env.PATH ?? "").split(":")) {
    if (dir && existsSync(`${dir}/go`)) return `${dir}/go`;
  }
  return "/usr/local/go/bin/go";
}

/** The -ldflags value: version stamps as upstream's release builds set them. */
export function versionLdflags(versions: GoBuildOptions["versions"]): string {
  const [major, minor] = versions.kubernetes.replace(/^v/, "").split(".");
  const stamps = ["k8s.io/component-base/version", "k8s.io/client-go/pkg/version"].flatMap(
    (pkg) => [
      `-X ${pkg}.gitVersion=${versions.kubernetes}`,
      `-X ${pkg}.gitMajor=${major}`,
      `-X ${pkg}.gitMinor=${minor}`,
      `-X ${pkg}.gitTreeState=clean`,
    ],
  );
  // Only csi-provisioner's main package has a `version` variable.
  const provisioner = versions.provisioner ? [`-X main.version=${versions.provisioner}`] : [];
  return ["-s", "-w", ...stamps, ...provisioner].join(" ");
}

/** Runs the build; throws with the tail of go's output when it fails. */
export async function runGoBuild(options: GoBuildOptions): Promise<void> {
  const started = performance.now();
  const elapsed = () => Math.round((performance.now() - started) / 1000);
  const command = new Deno.Command(goBinary(options.env), {
    args: [
      "build",
      "-v",
      "-buildvcs=false",
      `-ldflags=${options.ldflags ?? versionLdflags(options.versions)}`,
      "-o",
      options.outDir + "/",
      ...options.packages,
    ],
    cwd: options.toolsDir,
    ...(options.goEnv ? { env: options.goEnv } : {}),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
  const child = command.spawn();
  const abort = () => child.kill("SIGTERM");
  options.signal?.addEventListener("abort", abort, { once: true });
  let compiled = 0;
  const report = (what: string) =>
    options.onProgress({
      compiledPackages: compiled,
      elapsedSeconds: elapsed(),
      message: `${what} (${compiled} packages compiled, ${elapsed()} s)`,
    });
  const heartbeat = setInterval(() => report("still building"), HEARTBEAT_MS);
  const tail: string[] = [];
  const remember = (line: string) => {
    tail.push(line);
    if (tail.length > ERROR_TAIL_LINES) tail.shift();
  };
  try {
    const [status] = await Promise.all([
      child.status,
      readLines(child.stdout, remember),
      readLines(child.stderr, (line) => {
        remember(line);
        // Package paths have no spaces; errors and warnings do.
        if (line.includes(" ")) return;
        compiled++;
        if (compiled % PROGRESS_EVERY === 0) report(`compiling ${line}`);
      }),
    ]);
    if (!status.success) {
      throw new Error(
        `go build failed (exit ${status.code}) in ${options.toolsDir}:\n${tail.join("\n")}`,
      );
    }
    report("linked");
  } finally {
    clearInterval(heartbeat);
    options.signal?.removeEventListener("abort", abort);
  }
}

/** Calls onLine for each complete line of a byte stream (and a trailing partial one). */
async function readLines(stream: ReadableStream<Uint8Array>, onLine: (line: string) => void) {
  let pending = "";
  for await (const text of stream.pipeThrough(new TextDecoderStream())) {
    const parts = (pending + text).split("\n");
    pending = parts.pop() ?? "";
    for (const line of parts) onLine(line);
  }
  if (pending) onLine(pending);
}
