/**
 * The `explain [-n NS] CLAIM` program, and its composition root: it reads
 * the cluster with the user's kubeconfig through its own REST client and
 * prints why the claim is where it is. main.ts only dispatches to it; the
 * agent's adapters are not built for it.
 */
import process from "node:process";
import { type ExplainRequest, parseExplainArgs } from "../config/explain.ts";
import { type KubeCredentials, loadCredentials } from "../kube/rest/credentials.ts";
import { ExplainReader } from "../kube/explain_reads.ts";
import { createKubeRest } from "../kube/rest/client.ts";
import { credentialProblem, explainClaim, failure } from "./run.ts";

/** The binary's name and version, for messages and the User-Agent. */
interface ProgramName {
  program: string;
  version: string;
}

/** Runs `explain` with the arguments after the subcommand; resolves to the exit code. */
export async function explainProgram(
  argv: readonly string[],
  env: Record<string, string | undefined>,
  name: ProgramName,
): Promise<number> {
  const { program } = name;
  const parsed = parseExplainArgs(argv, env, { program });
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
  const { request } = parsed;
  let credentials: KubeCredentials;
  try {
    credentials = await loadCredentials({ ...request, env });
  } catch (error) {
    process.stderr.write(failure(program, credentialProblem(error, request.kubeconfig)).stderr);
    return 1;
  }
  return await explainWith(credentials, request, name);
}

async function explainWith(
  credentials: KubeCredentials,
  request: ExplainRequest,
  { program, version }: ProgramName,
): Promise<number> {
  const rest = createKubeRest(credentials, {
    budget: { qps: 50, burst: 50 },
    userAgent: `${program}/${version} explain`,
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
