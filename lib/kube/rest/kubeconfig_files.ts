/**
 * Which kubeconfig files to read, and reading them. The agent reads the one
 * file it is given; a user's command looks as kubectl looks: --kubeconfig,
 * else KUBECONFIG's ':'-separated list (files that do not exist are
 * skipped, but not all of them), else ~/.kube/config when it exists.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type Kubeconfig, KubeconfigError, type KubeconfigFile } from "./kubeconfig.ts";

/** The files to read, and how many of them must exist. */
export interface KubeconfigSearch {
  paths: string[];
  /** "every": each file must exist; "one": at least one; "none": all may be missing. */
  needed: "every" | "one" | "none";
}

/** kubectl's search: --kubeconfig, else KUBECONFIG's list, else ~/.kube/config. */
export function userKubeconfigSearch(
  flag: string,
  env: { KUBECONFIG?: string | undefined; HOME?: string | undefined },
): KubeconfigSearch {
  if (flag !== "") return { paths: [flag], needed: "every" };
  const list = [...new Set((env.KUBECONFIG ?? "").split(":").filter((path) => path !== ""))];
  if (list.length > 0) return { paths: list, needed: "one" };
  const home = env.HOME ?? "";
  return { paths: home === "" ? [] : [join(home, ".kube", "config")], needed: "none" };
}

/** Reads and parses the files that exist; throws when the search needs one that does not. */
export async function readKubeconfigs(search: KubeconfigSearch): Promise<KubeconfigFile[]> {
  const files: KubeconfigFile[] = [];
  for (const path of search.paths) {
    const text = readKubeconfig(path, search.needed !== "every");
    if (text !== undefined) files.push({ path, config: await parseKubeconfig(path, text) });
  }
  if (files.length === 0 && search.needed === "one") {
    throw new KubeconfigError(search.paths.join(":"), "cannot be read (ENOENT)");
  }
  return files;
}

/** The file's text; undefined when it does not exist and may be missing. */
function readKubeconfig(path: string, mayBeMissing: boolean): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (mayBeMissing && code === "ENOENT") return undefined;
    throw new KubeconfigError(path, `cannot be read (${code ?? "error"})`);
  }
}

/** JSON (a subset of YAML) without the YAML parser; anything else with it. */
async function parseKubeconfig(path: string, text: string): Promise<Kubeconfig> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    const { load } = await import("js-yaml");
    try {
      parsed = load(text);
    } catch (error) {
      throw new KubeconfigError(path, `is not valid YAML or JSON (${yamlProblem(error)})`);
    }
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new KubeconfigError(
      path,
      "is not a kubeconfig (a YAML mapping with clusters, users and contexts)",
    );
  }
  const config = parsed as Record<string, unknown>;
  for (const list of ["contexts", "clusters", "users"]) {
    if (config[list] !== undefined && config[list] !== null && !Array.isArray(config[list])) {
      throw new KubeconfigError(path, `is not a kubeconfig: ${list} is not a list`);
    }
  }
  return config as Kubeconfig;
}

/** js-yaml's reason and position, without its snippet of the file. */
function yamlProblem(error: unknown): string {
  const { reason, mark } = error as { reason?: string; mark?: { line?: number; column?: number } };
  const where = mark?.line === undefined
    ? ""
    : ` at line ${mark.line + 1}, column ${(mark.column ?? 0) + 1}`;
  return `${reason ?? "unreadable"}${where}`;
}
