/**
 * The standalone driver's command line. Flags take "--name value" or
 * "--name=value" (one dash works too, as with Go flags); every problem is
 * collected so one run shows them all.
 */
import type { ControllerCapabilityType, PluginServiceType } from "../../lib/csi/types.ts";
import {
  type DriverConfig,
  type DriverOptions,
  type PoolOption,
  resolveDriverConfig,
} from "./config.ts";

export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
export type LogLevel = typeof LOG_LEVELS[number];

export type FlagOutcome =
  | { kind: "run"; config: DriverConfig; logLevel: LogLevel }
  | { kind: "help"; text: string }
  | { kind: "invalid"; problems: string[] };

const FLAGS: Record<string, { repeatable?: boolean; value: string; help: string }> = {
  "endpoint": { value: "unix:///path/csi.sock", help: "CSI socket (required)" },
  "node-id": { value: "NAME", help: "node id, also the topology value (required)" },
  "capacity": {
    value: "KIND=SIZE",
    repeatable: true,
    help: "a pool, e.g. fast=10Gi (at least one)",
  },
  "max-volume-size": {
    value: "[KIND=]SIZE",
    repeatable: true,
    help: "largest volume of one pool, or of all pools without KIND=",
  },
  "driver-name": { value: "NAME", help: "default test.csi.k8s.io" },
  "vendor-version": { value: "VERSION", help: "default 0.0.0-test" },
  "topology-key": { value: "KEY", help: "default topology.test.csi.k8s.io/node" },
  "state-dir": {
    value: "DIR",
    help: "persist volumes in DIR/volumes.json and reload them on start",
  },
  "control-endpoint": { value: "unix:///path/control.sock", help: "HTTP/JSON control socket" },
  "controller-capabilities": { value: "LIST", help: "default CREATE_DELETE_VOLUME,GET_CAPACITY" },
  "plugin-capabilities": {
    value: "LIST",
    help: "default CONTROLLER_SERVICE,VOLUME_ACCESSIBILITY_CONSTRAINTS",
  },
  "call-log-limit": { value: "N", help: "calls kept for GET /calls, default 10000" },
  "volume-ids": {
    value: "random|name",
    help: "volume IDs: a UUID, or the volume name; default random",
  },
  "log-level": { value: "LEVEL", help: `one of ${LOG_LEVELS.join(", ")}; default info` },
};

export function usage(): string {
  const lines = Object.entries(FLAGS).map(([name, flag]) =>
    `  --${name} ${flag.value}`.padEnd(46) + flag.help
  );
  return [
    "Usage: csi-driver --endpoint unix:///path/csi.sock --node-id NODE --capacity KIND=SIZE [flags]",
    ...lines,
  ]
    .join("\n");
}

/** Reads argv (without the program name) into a configuration or a list of problems. */
export function parseDriverFlags(argv: readonly string[]): FlagOutcome {
  const problems: string[] = [];
  const values = collectFlags(argv, problems);
  if (values === "help") return { kind: "help", text: usage() };
  const single = (name: string): string | undefined => values.get(name)?.[0];
  const options: DriverOptions = {
    endpoint: single("endpoint") ?? "",
    nodeId: single("node-id") ?? "",
    pools: parsePools(values.get("capacity") ?? [], values.get("max-volume-size") ?? [], problems),
  };
  const copy = <K extends keyof DriverOptions>(
    key: K,
    flag: string,
    map: (v: string) => DriverOptions[K],
  ) => {
    const value = single(flag);
    if (value !== undefined) options[key] = map(value);
  };
  copy("controlEndpoint", "control-endpoint", (v) => v);
  copy("driverName", "driver-name", (v) => v);
  copy("vendorVersion", "vendor-version", (v) => v);
  copy("topologyKey", "topology-key", (v) => v);
  copy("stateDir", "state-dir", (v) => v);
  copy("volumeIds", "volume-ids", (v) => v as DriverOptions["volumeIds"]);
  copy(
    "controllerCapabilities",
    "controller-capabilities",
    (v) => list(v) as ControllerCapabilityType[],
  );
  copy("pluginCapabilities", "plugin-capabilities", (v) => list(v) as PluginServiceType[]);
  const limit = single("call-log-limit");
  if (limit !== undefined && !/^\d+$/.test(limit)) {
    problems.push(`--call-log-limit "${limit}" is not a number`);
  } else copy("callLogLimit", "call-log-limit", Number);
  const logLevel = single("log-level") ?? "info";
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    problems.push(`--log-level must be one of ${LOG_LEVELS.join(", ")}; got "${logLevel}"`);
  }
  const resolved = resolveDriverConfig(options);
  const all = [...problems, ...(resolved.ok ? [] : resolved.problems)];
  if (all.length > 0 || !resolved.ok) return { kind: "invalid", problems: all };
  return { kind: "run", config: resolved.config, logLevel: logLevel as LogLevel };
}

function collectFlags(argv: readonly string[], problems: string[]): Map<string, string[]> | "help" {
  const values = new Map<string, string[]>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    if (arg === "--" && i === 0) continue;
    const match = /^--?([a-z-]+)(?:=(.*))?$/s.exec(arg);
    if (match === null || match[1] === undefined) {
      problems.push(`unexpected argument "${arg}"`);
      continue;
    }
    const name = match[1];
    if (name === "help" || name === "h") return "help";
    const flag = FLAGS[name];
    if (flag === undefined) {
      problems.push(`unknown flag --${name}`);
      if (match[2] === undefined && argv[i + 1] !== undefined && !argv[i + 1]?.startsWith("-")) i++;
      continue;
    }
    let value = match[2];
    if (value === undefined) {
      value = argv[i + 1];
      if (value === undefined || /^--?[a-z]/.test(value)) {
        problems.push(`--${name} needs a value (${flag.value})`);
        continue;
      }
      i++;
    }
    const seen = values.get(name) ?? [];
    if (seen.length > 0 && flag.repeatable !== true) {
      problems.push(`--${name} is given more than once`);
    }
    values.set(name, [...seen, value]);
  }
  return values;
}

function parsePools(
  capacities: readonly string[],
  maxSizes: readonly string[],
  problems: string[],
): PoolOption[] {
  const pools: PoolOption[] = [];
  for (const text of capacities) {
    const [kind, size] = splitPair(text);
    if (kind === undefined || size === undefined) {
      problems.push(`--capacity "${text}" is not KIND=SIZE`);
    } else pools.push({ kind, size });
  }
  for (const text of maxSizes) {
    const [kind, size] = text.includes("=") ? splitPair(text) : [undefined, text];
    if (size === undefined) {
      problems.push(`--max-volume-size "${text}" is not [KIND=]SIZE`);
      continue;
    }
    const targets = kind === undefined ? pools : pools.filter((pool) => pool.kind === kind);
    if (kind !== undefined && targets.length === 0) {
      problems.push(`--max-volume-size names kind "${kind}", which no --capacity defines`);
    }
    for (const pool of targets) pool.maxVolumeSize = size;
  }
  return pools;
}

function splitPair(text: string): [string | undefined, string | undefined] {
  const at = text.indexOf("=");
  if (at <= 0 || at === text.length - 1) return [undefined, undefined];
  return [text.slice(0, at), text.slice(at + 1)];
}

function list(text: string): string[] {
  return text.split(",").map((item) => item.trim()).filter((item) => item !== "");
}
