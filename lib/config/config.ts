/**
 * parseConfig(argv, env): the command line and environment, validated all at
 * once. Pure: no process access, so tests call it with plain arrays.
 */
import { FLAGS, type FlagSpec } from "./flags.ts";
import { type FlagValue, parseFlagValue, parseGoFlags } from "./go_flags.ts";
import { renderHelp } from "./help.ts";
import type { Config, FeatureGates, ParseOutcome } from "./types.ts";
import { validateConfig } from "./validate.ts";

/** The environment variables the agent reads. */
export interface Environment {
  NODE_NAME?: string | undefined;
  NAMESPACE?: string | undefined;
  POD_NAME?: string | undefined;
  KUBECONFIG?: string | undefined;
}

const KNOWN_GATES: Record<string, boolean> = {
  Topology: true,
  CrossNamespaceVolumeDataSource: false,
  VolumeAttributesClass: true,
  ReleaseLeaderElectionOnExit: false,
};

function defaultValue(spec: FlagSpec): FlagValue {
  const parsed = parseFlagValue(spec.type, spec.default);
  if (!parsed.ok) throw new Error(`flag table: bad default of --${spec.name}: ${parsed.error}`);
  return parsed.value;
}

function featureGates(
  set: Record<string, boolean> | undefined,
  problems: string[],
): FeatureGates {
  const gates = { ...KNOWN_GATES, ...set };
  for (const name of Object.keys(set ?? {})) {
    if (!(name in KNOWN_GATES)) problems.push(`unrecognized feature gate: ${name}`);
  }
  return {
    Topology: gates["Topology"] ?? true,
    CrossNamespaceVolumeDataSource: gates["CrossNamespaceVolumeDataSource"] ?? false,
    VolumeAttributesClass: gates["VolumeAttributesClass"] ?? true,
    VolumeAttributesClassExplicit: set !== undefined && "VolumeAttributesClass" in set,
    ReleaseLeaderElectionOnExit: gates["ReleaseLeaderElectionOnExit"] ?? false,
  };
}

function buildConfig(values: Map<string, FlagValue>, env: Environment, problems: string[]): Config {
  const fields: Record<string, unknown> = {};
  for (const spec of FLAGS) {
    if (spec.field === undefined || spec.field === "featureGates") continue;
    const value = values.get(spec.name);
    // --metrics-address and --http-endpoint share a field: a default never overwrites a set value.
    if (value !== undefined || !(spec.field in fields)) {
      fields[spec.field] = value ?? defaultValue(spec);
    }
  }
  const config = fields as unknown as Config;
  config.featureGates = featureGates(
    values.get("feature-gates") as Record<string, boolean> | undefined,
    problems,
  );
  if (env.KUBECONFIG !== undefined && env.KUBECONFIG !== "") config.kubeconfig = env.KUBECONFIG;
  config.journalPath ||= defaultJournalPath(config.csiAddress);
  config.nodeName = env.NODE_NAME ?? "";
  config.namespace = env.NAMESPACE ?? "";
  config.podName = env.POD_NAME ?? "";
  return config;
}

/** The journal beside the CSI socket: the driver's own directory, a hostPath in node plugins. */
function defaultJournalPath(csiAddress: string): string {
  const path = csiAddress.replace(/^unix:(\/\/)?/, "");
  const slash = path.lastIndexOf("/");
  const directory = slash < 0 ? "." : slash === 0 ? "" : path.slice(0, slash);
  return `${directory}/csi-node-provisioner-journal.json`;
}

/**
 * Parses the command line (without the program name) and the environment.
 * Every problem is reported, not just the first.
 */
export function parseConfig(
  argv: readonly string[],
  env: Environment,
  options: { program?: string } = {},
): ParseOutcome {
  const parsed = parseGoFlags(argv, FLAGS);
  if (parsed.help) {
    return { kind: "help", text: renderHelp(FLAGS, options.program ?? "csi-node-provisioner") };
  }
  const problems = [...parsed.problems];
  if (problems.length === 0 && parsed.values.get("version") === true) return { kind: "version" };
  const config = buildConfig(parsed.values, env, problems);
  if (problems.length === 0 && parsed.values.get("journal-dump") === true) {
    return { kind: "journalDump", path: config.journalPath };
  }
  const both = parsed.values.has("metrics-address") && parsed.values.has("http-endpoint");
  problems.push(...validateConfig(config, { httpEndpointAndMetricsAddress: both }));
  return problems.length > 0 ? { kind: "invalid", problems } : { kind: "run", config };
}
