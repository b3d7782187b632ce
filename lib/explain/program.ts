/**
 * The `explain [-n NS] CLAIM` program, and its composition root: it reads
 * the cluster with the user's kubeconfig through its own REST client and
 * prints why the claim is where it is. main.ts only dispatches to it, as a
 * subcommand or as the kubectl plugin; the agent's adapters are not built for it.
 */
import process from "node:process";
import { chooseNamespace, type ExplainRequest, parseExplainArgs } from "../config/explain.ts";
import { type KubeCredentials, loadUserCredentials } from "../kube/rest/credentials.ts";
import { ExplainReader } from "../kube/explain_reads.ts";
import { createKubeRest } from "../kube/rest/client.ts";
import { isKubectlPlugin, PLUGIN_COMMAND, pluginExplainArgs } from "./plugin.ts";
import { credentialProblem, explainClaim, failure } from "./run.ts";

export { isKubectlPlugin };

/** The binary's name and version, for messages and the User-Agent. */
interface ProgramName {
  program: string;
  version: string;
  /** Called as the kubectl plugin: `explain` may be left out. */
  plugin?: boolean;
  /** The binary's name for the User-Agent, when `program` is the plugin's command. */
  product?: string;
}

/** Runs the kubectl plugin (`kubectl csi-node-provisioner [explain] ...`); resolves to the exit code. */
export async function kubectlPluginProgram(
  argv: readonly string[],
  env: Record<string, string | undefined>,
  { program, version }: ProgramName,
): Promise<number> {
  const name = { program: PLUGIN_COMMAND, version, plugin: true, product: program };
  return await explainProgram(pluginExplainArgs(argv), env, name);
}

/** Runs `explain` with the arguments after the subcommand; resolves to the exit code. */
export async function explainProgram(
  argv: readonly string[],
  env: Record<string, string | undefined>,
  name: ProgramName,
): Promise<number> {
  const { program } = name;
  const parsed = parseExplainArgs(argv, { program, plugin: name.plugin ?? false });
  switch (parsed.kind) {
    case "help":
      process.stdout.write(parsed.text);
      return 0;
    case "invalid":
      process.stderr.write(
        `${program} explain: ${parsed.problem} (see ${program} explain --help)\n`,
      );
      return 2;
    case "explain":
      break;
  }
  let credentials: KubeCredentials;
  let request = parsed.request;
  try {
    const loaded = await loadUserCredentials({ ...request, env });
    credentials = loaded.credentials;
    request = { ...request, namespace: chooseNamespace(request.namespace, loaded.namespace) };
  } catch (error) {
    process.stderr.write(failure(program, credentialProblem(error, request.kubeconfig)).stderr);
    return 1;
  }
  return await explainWith(credentials, request, name);
}

async function explainWith(
  credentials: KubeCredentials,
  request: ExplainRequest,
  { program, version, product }: ProgramName,
): Promise<number> {
  const rest = createKubeRest(credentials, {
    budget: { qps: 50, burst: 50 },
    userAgent: `${product ?? program}/${version} explain`,
  });
  try {
    const result = await explainClaim(new ExplainReader(rest), {
      namespace: request.namespace,
      name: request.claim,
      agentSelector: request.agentSelector,
      server: credentials.server,
      program,
    });
    process.stdout.write(result.stdout);
    process.stderr.write(result.stderr);
    return result.code;
  } finally {
    rest.close();
  }
}
