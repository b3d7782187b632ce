/**
 * Where the agent's CPU goes: reads a V8/JSC `.cpuprofile` (as `bun
 * --cpu-prof` writes it, see profiled_agent.sh) and sums the self time of
 * every sample by category. A native frame (JSON.parse aside) counts for the
 * nearest JavaScript frame above it, so Bun's native socket writes land in
 * "HTTP/1.1 client" and protobuf's generated decoders in "gRPC".
 *
 *   deno run -A bench/cpu_profile.ts /tmp/prof/CPU.*.cpuprofile
 *
 * A profile of the compiled binary (profiled_binary.sh) names every frame of
 * the agent by its line in the one bundled file (/$bunfs/root/...); with
 * `--bundle FILE`, the same bundle as plain JavaScript, each such frame is
 * given the path of the module it came from (the bundler's `// path`
 * comments), so the categories apply to it as to a run from source:
 *
 *   deno run -A bench/cpu_profile.ts --bundle /tmp/agent.js /tmp/prof/CPU.*.cpuprofile
 */

import { parseArgs } from "node:util";

/** The parts of the .cpuprofile format this reads. */
export interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber?: number };
    children?: number[];
  }[];
  /** Node id of each sample's innermost frame. */
  samples: number[];
}

type Frame = CpuProfile["nodes"][number]["callFrame"];

/** First match wins; a frame matching none takes its caller's category. */
const CATEGORIES: readonly [string, (frame: Frame) => boolean][] = [
  ["JSON.parse (API responses, watch events)", (f) => f.functionName === "parse" && !isJs(f)],
  ["JSON.stringify (request bodies)", (f) => f.functionName === "stringify" && !isJs(f)],
  [
    "gRPC (grpc-js, protobufjs, node:http2)",
    urlMatches(/grpc-js|proto-loader|protobufjs|node:http2|\/long\//),
  ],
  ["metrics (prom-client)", urlMatches(/prom-client|bintrees|tdigest/)],
  ["logging (pino)", urlMatches(/pino|sonic-boom|thread-stream|quick-format/)],
  [
    "HTTP/1.1 client, TLS and sockets (node:http, node:https, node:net, streams)",
    urlMatches(
      /node:_?https?|node:net|internal:net|internal:streams|node:events|node:tls|internal:tls|abort_listener/,
    ),
  ],
  [
    "informers: watch lines → trim → filter → enqueue",
    urlMatches(/lib\/kube\/(informer|trim|caches|rest\/managed_fields)/),
  ],
  ["events writer", urlMatches(/lib\/kube\/events/)],
  [
    "fetch transport (Bun's native fetch, its TLS settings)",
    urlMatches(/lib\/runtime\/platform|lib\/kube\/rest\/fetch/),
  ],
  ["intent journal (records, writes, fsync)", urlMatches(/lib\/journal\//)],
  ["REST client (requests, rate limiter, timeouts)", urlMatches(/lib\/kube\//)],
  ["topology and node-affinity checks", urlMatches(/lib\/topology\/|volume_owner/)],
  ["provisioning and deletion logic", urlMatches(/lib\/provision\//)],
  ["work queue", urlMatches(/lib\/queue\//)],
  ["capacity", urlMatches(/lib\/capacity\//)],
  ["CSI client and composition root", urlMatches(/lib\/csi\/|main\.ts/)],
  ["other JavaScript", (f) => isJs(f)],
];

function isJs(frame: Frame): boolean {
  return frame.url !== "" && frame.url !== "[native code]";
}

function urlMatches(pattern: RegExp): (frame: Frame) => boolean {
  return (frame) => isJs(frame) && pattern.test(frame.url);
}

const IDLE = new Set(["(idle)", "(program)"]);
const UNATTRIBUTED = "native, no JavaScript caller";

/** Share of non-idle samples per category, largest first. */
export function cpuBreakdown(profile: CpuProfile): { category: string; share: number }[] {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map<number, number>();
  for (const node of profile.nodes) {
    for (const child of node.children ?? []) parents.set(child, node.id);
  }
  const categories = new Map<number, string>();
  const categoryOf = (id: number): string => {
    const known = categories.get(id);
    if (known !== undefined) return known;
    const frame = nodes.get(id)?.callFrame;
    const own = frame && CATEGORIES.find(([, matches]) => matches(frame))?.[0];
    const parent = parents.get(id);
    const category = own ?? (parent === undefined ? UNATTRIBUTED : categoryOf(parent));
    categories.set(id, category);
    return category;
  };
  const counts = new Map<string, number>();
  let total = 0;
  for (const id of profile.samples) {
    if (IDLE.has(nodes.get(id)?.callFrame.functionName ?? "")) continue;
    const category = categoryOf(id);
    counts.set(category, (counts.get(category) ?? 0) + 1);
    total++;
  }
  return [...counts]
    .map(([category, count]) => ({ category, share: count / total }))
    .sort((a, b) => b.share - a.share);
}

/**
 * Renames the frames of a compiled binary (url /$bunfs/...) to the module
 * their line falls in, from the bundle's `// path` comments that start each
 * module. The bundle given need not start where the compiled one did (the
 * runtime helpers at its top differ between `--compile --bytecode` and a
 * plain `--target=bun` build: 25 lines in Bun 1.4.5), so the lines are first
 * shifted by bundleLineOffset(). A line above the first module is the
 * bundler's helpers (`__commonJS`, `__toESM`, …): each module's first run.
 */
export function withModulePaths(profile: CpuProfile, bundle: string): CpuProfile {
  const lines = bundle.split("\n");
  const starts: { line: number; path: string }[] = [];
  lines.forEach((text, index) => {
    const match = /^\/\/ ((?:node_modules\/)?[\w@.-]+\/[^ ]+\.[cm]?[jt]s)$/.exec(text);
    if (match !== null) starts.push({ line: index, path: match[1]! });
  });
  const moduleAt = (line: number) => {
    if (starts.length === 0 || line < starts[0]!.line) return "bundler helpers";
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {
      const middle = Math.ceil((low + high) / 2);
      if (starts[middle]!.line <= line) low = middle;
      else high = middle - 1;
    }
    return starts[low]!.path;
  };
  const offset = bundleLineOffset(profile, lines);
  const nodes = profile.nodes.map((node) => {
    const { url, lineNumber } = node.callFrame;
    if (!url.includes("$bunfs") || lineNumber === undefined) return node;
    return { ...node, callFrame: { ...node.callFrame, url: `/${moduleAt(lineNumber + offset)}` } };
  });
  return { ...profile, nodes };
}

/**
 * How many lines the given bundle is below the compiled one: the most
 * common difference between where a named function of the profile is
 * declared in the bundle (`function name(`, declared once) and the line
 * the profile gives for it. 0 when no name is found.
 */
export function bundleLineOffset(profile: CpuProfile, lines: readonly string[]): number {
  const declared = new Map<string, number | null>();
  lines.forEach((text, index) => {
    const match = /^\s*(?:async )?function\*? ([\w$]+)\(/.exec(text);
    if (match === null) return;
    declared.set(match[1]!, declared.has(match[1]!) ? null : index);
  });
  const votes = new Map<number, number>();
  for (const { callFrame } of profile.nodes) {
    const line = declared.get(callFrame.functionName);
    if (line == null || callFrame.lineNumber === undefined) continue;
    const offset = line - callFrame.lineNumber;
    votes.set(offset, (votes.get(offset) ?? 0) + 1);
  }
  return [...votes].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 0;
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    args: Deno.args,
    options: { bundle: { type: "string" } },
    allowPositionals: true,
  });
  const bundle = values.bundle === undefined ? undefined : await Deno.readTextFile(values.bundle);
  for (const path of positionals) {
    const read = JSON.parse(await Deno.readTextFile(path)) as CpuProfile;
    const profile = bundle === undefined ? read : withModulePaths(read, bundle);
    console.log(`${path}: ${profile.samples.length} samples`);
    for (const { category, share } of cpuBreakdown(profile)) {
      console.log(`${(share * 100).toFixed(1).padStart(6)}%  ${category}`);
    }
  }
}
