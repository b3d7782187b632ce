/**
 * A kubeconfig as plain data, and kubectl's rules over it: a list of files
 * merged into one (the first file to set a cluster, user or context by name
 * wins, and the first to set current-context), and the context chosen by
 * --context or current-context. Paths inside a file are relative to it, so
 * they are made absolute before the files are merged.
 */
import { dirname, isAbsolute, join } from "node:path";
import { FatalError } from "../../runtime/fatal.ts";

export interface KubeconfigUser {
  token?: string;
  tokenFile?: string;
  "client-certificate"?: string;
  "client-certificate-data"?: string;
  "client-key"?: string;
  "client-key-data"?: string;
  username?: string;
  password?: string;
  exec?: unknown;
  "auth-provider"?: unknown;
}

export interface KubeconfigCluster {
  server: string;
  "certificate-authority"?: string;
  "certificate-authority-data"?: string;
  "insecure-skip-tls-verify"?: boolean;
  "tls-server-name"?: string;
}

export interface KubeconfigContext {
  cluster: string;
  user: string;
  namespace?: string;
}

export interface Kubeconfig {
  "current-context"?: string;
  contexts?: { name: string; context: KubeconfigContext }[];
  clusters?: { name: string; cluster: KubeconfigCluster }[];
  users?: { name: string; user: KubeconfigUser }[];
}

/** One kubeconfig file as read, with its path. */
export interface KubeconfigFile {
  path: string;
  config: Kubeconfig;
}

/** The context in use, with what it names. */
export interface ChosenContext {
  name: string;
  cluster: KubeconfigCluster;
  user: KubeconfigUser;
  /** The context's namespace, "" when it sets none. */
  namespace: string;
}

/**
 * A kubeconfig that cannot be used: bad configuration, exit code 2. The
 * message names the file and the problem and never quotes the file: a
 * kubeconfig holds tokens and keys, and parsers' messages show the lines
 * around the error (js-yaml) or the text itself (JSON.parse).
 */
export class KubeconfigError extends FatalError {
  constructor(path: string, problem: string) {
    super(`kubeconfig ${path}: ${problem}`, { exitCode: 2 });
    this.name = "KubeconfigError";
  }
}

/** Merges the files as kubectl merges KUBECONFIG's list: the first to set a name or current-context wins. */
export function mergeKubeconfigs(files: readonly KubeconfigFile[]): Kubeconfig {
  const merged: Required<Kubeconfig> = {
    "current-context": "",
    contexts: [],
    clusters: [],
    users: [],
  };
  for (const { path, config } of files) {
    const base = dirname(path);
    if (merged["current-context"] === "") {
      merged["current-context"] = config["current-context"] ?? "";
    }
    addNew(merged.contexts, config.contexts ?? []);
    addNew(
      merged.clusters,
      (config.clusters ?? []).map((entry) => ({
        ...entry,
        cluster: clusterIn(base, entry.cluster),
      })),
    );
    addNew(
      merged.users,
      (config.users ?? []).map((entry) => ({ ...entry, user: userIn(base, entry.user) })),
    );
  }
  return merged;
}

/** Appends the entries whose name is not taken yet. */
function addNew<T extends { name: string }>(into: T[], entries: readonly T[]): void {
  for (const entry of entries) {
    if (!into.some((taken) => taken.name === entry.name)) into.push(entry);
  }
}

/**
 * The context named by --context, else current-context, and its cluster and
 * user; `source` names the kubeconfig in messages.
 */
export function chooseContext(
  config: Kubeconfig,
  options: { context: string; source: string },
): ChosenContext {
  const { source } = options;
  const name = options.context !== "" ? options.context : config["current-context"] ?? "";
  if (name === "") {
    throw new KubeconfigError(source, "sets no current-context");
  }
  const context = config.contexts?.find((candidate) => candidate.name === name)?.context;
  if (context === undefined) {
    const which = options.context !== "" ? "no context" : "no current context";
    throw new KubeconfigError(source, `${which} ${JSON.stringify(name)}`);
  }
  const cluster = config.clusters?.find((candidate) => candidate.name === context.cluster)?.cluster;
  if (cluster === undefined) {
    throw new KubeconfigError(source, `no cluster ${JSON.stringify(context.cluster)}`);
  }
  const user = config.users?.find((candidate) => candidate.name === context.user)?.user ?? {};
  return { name, cluster, user, namespace: context.namespace ?? "" };
}

/** A path written in a kubeconfig: relative ones are relative to the kubeconfig's directory. */
function pathIn(base: string, file: string): string {
  return isAbsolute(file) ? file : join(base, file);
}

function clusterIn(base: string, cluster: KubeconfigCluster): KubeconfigCluster {
  const ca = cluster?.["certificate-authority"];
  return ca === undefined ? cluster : { ...cluster, "certificate-authority": pathIn(base, ca) };
}

function userIn(base: string, user: KubeconfigUser): KubeconfigUser {
  const resolved = { ...user };
  for (const key of ["tokenFile", "client-certificate", "client-key"] as const) {
    const file = user?.[key];
    if (file !== undefined) resolved[key] = pathIn(base, file);
  }
  const exec = user?.exec as { command?: unknown } | undefined;
  // As kubectl: a command with a directory in it is relative to the file; a bare name is looked up on PATH.
  if (typeof exec?.command === "string" && exec.command.includes("/")) {
    resolved.exec = { ...exec, command: pathIn(base, exec.command) };
  }
  return resolved;
}
