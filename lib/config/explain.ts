/**
 * The command line of `csi-node-provisioner explain [-n NS] CLAIM` (and of
 * the kubectl plugin, which is the same command): pure, so that tests call it
 * with plain arrays. Flags mean what kubectl's do: the kubeconfig is found as
 * kubectl finds it (lib/kube/rest/kubeconfig_files.ts), --context picks a
 * context, and the namespace is -n, else the context's, else "default".
 */

/** The agents' pods in deploy/ (the DaemonSet's selector and the chart's). */
export const DEFAULT_AGENT_SELECTOR = "app.kubernetes.io/name=csi-node-provisioner";

/** What `explain` was asked. */
export interface ExplainRequest {
  /** -n, or the NAMESPACE of NAMESPACE/CLAIM; "" when neither names one (see chooseNamespace). */
  namespace: string;
  claim: string;
  /** --kubeconfig; "" to search as kubectl does. */
  kubeconfig: string;
  /** --context; "" for the kubeconfig's current-context. */
  context: string;
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
  context: "context",
  master: "master",
  "agent-selector": "agentSelector",
};

/** How the program was called: its name in messages, and whether it is the kubectl plugin. */
interface ExplainInvocation {
  program: string;
  /** As `kubectl csi-node-provisioner`, where `explain` may be left out. */
  plugin?: boolean;
}

/** The help of the subcommand. */
function explainHelp({ program, plugin }: ExplainInvocation): string {
  return [
    `Usage: ${program} explain [-n NAMESPACE] [flags] [NAMESPACE/]CLAIM`,
    ...(plugin ? [`       ${program} [-n NAMESPACE] [flags] [NAMESPACE/]CLAIM`] : []),
    "",
    "Says in plain words why a PersistentVolumeClaim is where it is: its class and binding mode,",
    "the selected node and whether that node's agent is ready, every node's published capacity",
    "for the class against the request, the owning agent's decision (the agent's own checks,",
    "replayed with its pod's flags), the Immediate binding race, the bound volume's node, and the",
    "last Events of the claim and of the pods that use it. It only reads; the first line is the verdict.",
    "",
    "Flags:",
    "  -n, --namespace NAME      the claim's namespace (default: the context's namespace, else",
    '                            "default")',
    "  --kubeconfig PATH         kubeconfig (default: KUBECONFIG, a ':'-separated list merged as",
    "                            kubectl merges it, else ~/.kube/config, else the in-cluster account)",
    "  --context NAME            the kubeconfig context to use (default: its current-context)",
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
  invocation: ExplainInvocation,
): ExplainParse {
  const request: ExplainRequest = {
    namespace: "",
    claim: "",
    kubeconfig: "",
    context: "",
    master: "",
    agentSelector: DEFAULT_AGENT_SELECTOR,
  };
  const names: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index] ?? "";
    if (arg === "-h" || arg === "--help" || arg === "-help") {
      return { kind: "help", text: explainHelp(invocation) };
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
  return withClaim(request, names[0] ?? "");
}

/** The claim argument, CLAIM or NAMESPACE/CLAIM (a claim's name has no slash). */
function withClaim(request: ExplainRequest, arg: string): ExplainParse {
  const slash = arg.indexOf("/");
  if (slash < 0) return { kind: "explain", request: { ...request, claim: arg } };
  const [namespace, claim] = [arg.slice(0, slash), arg.slice(slash + 1)];
  if (namespace === "" || claim === "" || claim.includes("/")) {
    return { kind: "invalid", problem: `${arg} is not CLAIM or NAMESPACE/CLAIM` };
  }
  if (request.namespace !== "" && request.namespace !== namespace) {
    return {
      kind: "invalid",
      problem: `two namespaces: --namespace ${request.namespace} and ${arg}`,
    };
  }
  return { kind: "explain", request: { ...request, namespace, claim } };
}

/** As kubectl: the namespace asked for, else the kubeconfig context's, else "default". */
export function chooseNamespace(asked: string, context: string): string {
  return asked !== "" ? asked : context !== "" ? context : "default";
}

/** "--namespace=x" → ["namespace", "x"]; "-n" → ["n", undefined]. */
function splitFlag(arg: string): [string, string | undefined] {
  const bare = arg.replace(/^--?/, "");
  const equals = bare.indexOf("=");
  return equals < 0 ? [bare, undefined] : [bare.slice(0, equals), bare.slice(equals + 1)];
}
