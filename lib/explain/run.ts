/**
 * `explain` from a request to its output: load, explain, render; and the one
 * line for each way it cannot (no such claim or namespace, credentials the
 * API server refuses, an API server it cannot reach). A kubeconfig's content
 * never appears in a message: only its path and the server's address.
 */
import { KubeApiError } from "../kube/rest/types.ts";
import { explainSnapshot, renderExplanation } from "./explain.ts";
import { type ExplainTarget, loadSnapshot } from "./load.ts";
import type { ExplainReads } from "./ports.ts";

/** What the process prints and exits with. */
interface ExplainResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Explains the claim; never throws. */
export async function explainClaim(
  reads: ExplainReads,
  target: ExplainTarget & { server: URL; program: string },
): Promise<ExplainResult> {
  let loaded: Awaited<ReturnType<typeof loadSnapshot>>;
  try {
    loaded = await loadSnapshot(reads, target);
  } catch (error) {
    return failure(target.program, readProblem(error, target.server));
  }
  if (loaded.kind === "missing") return failure(target.program, loaded.message);
  try {
    return { code: 0, stdout: renderExplanation(explainSnapshot(loaded.snapshot)), stderr: "" };
  } catch (error) {
    // A fault of explain itself, not of the cluster: say so rather than blame the API server.
    return failure(target.program, `cannot explain: ${(error as Error).message ?? String(error)}`);
  }
}

/** The one line of a failure, exit code 1. */
export function failure(program: string, message: string): ExplainResult {
  return { code: 1, stdout: "", stderr: `${program} explain: ${firstLine(message)}\n` };
}

/** Why a read failed, in words. */
export function readProblem(error: unknown, server: URL): string {
  const at = `the API server at ${server.origin}`;
  if (error instanceof KubeApiError) {
    if (error.status === 401) {
      return `${at} refused the kubeconfig's credentials (401 Unauthorized)`;
    }
    if (error.status === 403) return `${at} forbids a read explain needs: ${error.message}`;
    return `${at} answered ${error.status} ${error.reason}: ${error.message}`;
  }
  return `cannot reach ${at}: ${(error as Error).message ?? String(error)}`;
}

/**
 * Why the credentials could not be loaded. File errors and this project's
 * own messages name only the path; a parser's message can quote the file
 * (a token), so it is replaced by what kind of problem it was.
 */
export function credentialProblem(error: unknown, kubeconfig: string): string {
  const where = kubeconfig === "" ? "" : ` ${kubeconfig}`;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") {
    const why = code === "ENOENT"
      ? "no such file"
      : code === "EACCES"
      ? "permission denied"
      : code === "EISDIR"
      ? "it is a directory"
      : code;
    return `cannot use the kubeconfig${where}: ${why}`;
  }
  const message = error instanceof Error ? error.message : String(error);
  if (/^kubeconfig |^no Kubernetes configuration/.test(message)) return message;
  if (error instanceof Error && error.name === "YAMLException") {
    return `cannot use the kubeconfig${where}: it is not valid YAML or JSON`;
  }
  return `cannot use the kubeconfig${where}: it is not a usable kubeconfig (${
    error instanceof Error ? error.name : "error"
  })`;
}

function firstLine(text: string): string {
  const line = text.split("\n")[0] ?? "";
  return line.length > 400 ? `${line.slice(0, 400)}…` : line;
}
