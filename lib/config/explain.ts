/**
 * The command line of `csi-node-provisioner explain [-n NS] CLAIM`: pure, so
 * that tests call it with plain arrays. The kubeconfig is resolved as the
 * agent's (--kubeconfig, else KUBECONFIG, else in-cluster).
 */

/** The agents' pods in deploy/ (the DaemonSet's selector and the chart's). */
export const DEFAULT_AGENT_SELECTOR = "app.kubernetes.io/name=csi-node-provisioner";

/** What `explain` was asked. */
export interface ExplainRequest {
  namespace: string;
  claim: string;
  kubeconfig: string;
  master: string;
  /** Label selector of the agents' pods, in every namespace. */
  agentSelector: string;
}

/** The parsed command line. */
type ExplainParse =
  | { kind: "explain"; request: ExplainRequest }
  | { kind: "help"; text: string }
  | { kind: "invalid"; problem: string };

const VALUE_FLAGS: Record<string, keyof ExplainRequest> = {
  n: "namespace",
  namespace: "namespace",
  kubeconfig: "kubeconfig",
  master: "master",
  "agent-selector": "agentSelector",
};

/** The help of the subcommand. */
function explainHelp(program: string): string {
  return [
    `Usage: ${program} explain [-n NAMESPACE] [flags] CLAIM`,
    "",
    "Says in plain words why a PersistentVolumeClaim is where it is: its class and binding mode,",
    "the selected node and whether that node's agent is ready, every node's published capacity",
    "for the class against the request, the owning agent's decision (the agent's own checks,",
    "replayed with its pod's flags), the Immediate binding race, the bound volume's node, and the",
    "last Events of the claim and of the pods that use it. It only reads; the first line is the verdict.",
    "",
    "Flags:",
    '  -n, --namespace NAME      the claim\'s namespace (default "default")',
    "  --kubeconfig PATH         kubeconfig (default: KUBECONFIG, else the in-cluster account)",
    "  --master URL              API server URL, overriding the kubeconfig's",
    `  --agent-selector LABELS   label selector of the agents' pods (default "${DEFAULT_AGENT_SELECTOR}")`,
    "",
    "Exit codes: 0 explained; 1 the claim or its namespace does not exist, or the cluster cannot be",
    "read with this kubeconfig; 2 bad arguments. Errors are one line on stderr.",
    "",
  ].join("\n");
}

/** Parses the arguments after `explain`. */
export function parseExplainArgs(
  argv: readonly string[],
  env: { KUBECONFIG?: string | undefined },
  options: { program: string },
): ExplainParse {
  const request: ExplainRequest = {
    namespace: "default",
    claim: "",
    kubeconfig: env.KUBECONFIG ?? "",
    master: "",
    agentSelector: DEFAULT_AGENT_SELECTOR,
  };
  const names: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index] ?? "";
    if (arg === "-h" || arg === "--help" || arg === "-help") {
      return { kind: "help", text: explainHelp(options.program) };
    }
    if (!arg.startsWith("-") || arg === "-") {
      names.push(arg);
      continue;
    }
    const [flag = "", inline] = splitFlag(arg);
    const field = VALUE_FLAGS[flag];
    if (field === undefined) return { kind: "invalid", problem: `unknown flag ${arg}` };
    const value = inline ?? argv[++index];
    if (value === undefined || value === "") {
      return { kind: "invalid", problem: `flag ${arg} needs a value` };
    }
    request[field] = value;
  }
  if (names.length !== 1) {
    return {
      kind: "invalid",
      problem: names.length === 0
        ? "name the claim to explain"
        : `one claim only, not ${names.join(" ")}`,
    };
  }
  request.claim = names[0] ?? "";
  return { kind: "explain", request };
}

/** "--namespace=x" → ["namespace", "x"]; "-n" → ["n", undefined]. */
function splitFlag(arg: string): [string, string | undefined] {
  const bare = arg.replace(/^--?/, "");
  const equals = bare.indexOf("=");
  return equals < 0 ? [bare, undefined] : [bare.slice(0, equals), bare.slice(equals + 1)];
}
