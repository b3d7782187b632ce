/**
 * Where the agent's Kubernetes credentials come from, as upstream: a
 * kubeconfig (--kubeconfig, or KUBECONFIG folded into it by lib/config), else
 * the in-cluster ServiceAccount; --master overrides the server URL.
 *
 * The common cases (in-cluster tokens, token and certificate kubeconfigs) are
 * read here directly. Loading @kubernetes/client-node costs tens of MiB of
 * resident memory in the compiled binary, on every node, so it is imported
 * only for kubeconfigs whose user needs an exec or auth-provider plugin, and
 * the YAML parser only for kubeconfigs that are not JSON. In a pod
 * (in-cluster credentials) neither is ever loaded.
 */
import { readFileSync } from "node:fs";
import type https from "node:https";
import { dirname, isAbsolute, join } from "node:path";
import { FatalError } from "../../runtime/fatal.ts";
import type { TlsSettings } from "../../runtime/platform.ts";

/** TLS settings and authorization headers for one API server. */
export interface KubeCredentials {
  server: URL;
  tls: TlsSettings;
  /** The file `tls.ca` was read from, when it came from one: read again when it changes. */
  caFile?: string;
  /** The Authorization header (and any other), re-read when it can change. */
  headers(): Promise<Record<string, string>>;
}

const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";
/** Projected ServiceAccount tokens rotate; client-go re-reads the file about every minute. */
const TOKEN_FILE_TTL_MS = 60_000;

interface KubeconfigUser {
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

interface KubeconfigCluster {
  server: string;
  "certificate-authority"?: string;
  "certificate-authority-data"?: string;
  "insecure-skip-tls-verify"?: boolean;
  "tls-server-name"?: string;
}

interface Kubeconfig {
  "current-context"?: string;
  contexts?: { name: string; context: { cluster: string; user: string } }[];
  clusters?: { name: string; cluster: KubeconfigCluster }[];
  users?: { name: string; user: KubeconfigUser }[];
}

/** A token read from a file, cached for a while so that rotation is picked up. */
function fileToken(path: string, now: () => number = Date.now): () => string {
  let cached: { token: string; at: number } | undefined;
  return () => {
    if (cached === undefined || now() - cached.at > TOKEN_FILE_TTL_MS) {
      cached = { token: readFileSync(path, "utf8").trim(), at: now() };
    }
    return cached.token;
  };
}

function bearer(token: () => string): () => Promise<Record<string, string>> {
  return () => Promise.resolve({ authorization: `Bearer ${token()}` });
}

function inCluster(env: Record<string, string | undefined>, master: string): KubeCredentials {
  const host = env["KUBERNETES_SERVICE_HOST"] ?? "";
  const port = env["KUBERNETES_SERVICE_PORT"] ?? "443";
  const server = master !== ""
    ? master
    : `https://${host.includes(":") ? `[${host}]` : host}:${port}`;
  const caFile = join(SERVICE_ACCOUNT_DIR, "ca.crt");
  return {
    server: new URL(server),
    tls: { ca: readFileSync(caFile) },
    caFile,
    headers: bearer(fileToken(join(SERVICE_ACCOUNT_DIR, "token"))),
  };
}

function fileOrData(
  base: string,
  file: string | undefined,
  data: string | undefined,
): Buffer | undefined {
  if (data !== undefined) return Buffer.from(data, "base64");
  if (file !== undefined) return readFileSync(pathIn(base, file));
  return undefined;
}

/** A kubeconfig's file path: relative ones are relative to the kubeconfig's directory. */
function pathIn(base: string, file: string): string {
  return isAbsolute(file) ? file : join(base, file);
}

function userHeaders(base: string, user: KubeconfigUser): () => Promise<Record<string, string>> {
  if (user.token !== undefined) return bearer(() => user.token ?? "");
  if (user.tokenFile !== undefined) {
    return bearer(
      fileToken(pathIn(base, user.tokenFile)),
    );
  }
  if (user.username !== undefined) {
    const basic = Buffer.from(`${user.username}:${user.password ?? ""}`).toString("base64");
    return () => Promise.resolve({ authorization: `Basic ${basic}` });
  }
  return () => Promise.resolve({});
}

/**
 * A kubeconfig that cannot be used: bad configuration, exit code 2. The
 * message names the file and the problem and never quotes the file: a
 * kubeconfig holds tokens and keys, and parsers' messages show the lines
 * around the error (js-yaml) or the text itself (JSON.parse).
 */
class KubeconfigError extends FatalError {
  constructor(path: string, problem: string) {
    super(`kubeconfig ${path}: ${problem}`, { exitCode: 2 });
    this.name = "KubeconfigError";
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
    if (config[list] !== undefined && !Array.isArray(config[list])) {
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

function readKubeconfig(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    throw new KubeconfigError(
      path,
      `cannot be read (${(error as { code?: string }).code ?? "error"})`,
    );
  }
}

/** Reads a kubeconfig's current context; plugins are delegated to client-node. */
async function fromKubeconfig(path: string, master: string): Promise<KubeCredentials> {
  const base = dirname(path);
  const config = await parseKubeconfig(path, readKubeconfig(path));
  const contextName = config["current-context"];
  const context = config.contexts?.find((candidate) => candidate.name === contextName)?.context;
  if (context === undefined) {
    throw new KubeconfigError(path, `no current context ${JSON.stringify(contextName)}`);
  }
  const cluster = config.clusters?.find((candidate) => candidate.name === context.cluster)?.cluster;
  const user = config.users?.find((candidate) => candidate.name === context.user)?.user ?? {};
  if (cluster === undefined) {
    throw new KubeconfigError(path, `no cluster ${JSON.stringify(context.cluster)}`);
  }
  if (user.exec !== undefined || user["auth-provider"] !== undefined) {
    return await withClientNode(path, master);
  }
  const tls: KubeCredentials["tls"] = {
    rejectUnauthorized: cluster["insecure-skip-tls-verify"] !== true,
  };
  const ca = fileOrData(
    base,
    cluster["certificate-authority"],
    cluster["certificate-authority-data"],
  );
  const cert = fileOrData(base, user["client-certificate"], user["client-certificate-data"]);
  const key = fileOrData(base, user["client-key"], user["client-key-data"]);
  if (ca !== undefined) tls.ca = ca;
  if (cert !== undefined) tls.cert = cert;
  if (key !== undefined) tls.key = key;
  if (cluster["tls-server-name"] !== undefined) tls.servername = cluster["tls-server-name"];
  const caFile = cluster["certificate-authority-data"] === undefined
    ? cluster["certificate-authority"]
    : undefined;
  return {
    server: new URL(master !== "" ? master : cluster.server),
    tls,
    ...(caFile === undefined ? {} : { caFile: pathIn(base, caFile) }),
    headers: userHeaders(base, user),
  };
}

/** Exec and auth-provider plugins: client-node knows them all; loaded only here. */
async function withClientNode(path: string, master: string): Promise<KubeCredentials> {
  const { KubeConfig } = await import("@kubernetes/client-node");
  const config = new KubeConfig();
  config.loadFromFile(path);
  const cluster = config.getCurrentCluster();
  if (cluster === null) throw new Error(`kubeconfig ${path}: no current cluster`);
  const options: https.RequestOptions = {};
  await config.applyToHTTPSOptions(options);
  (options.agent as https.Agent | undefined)?.destroy();
  return {
    server: new URL(master !== "" ? master : cluster.server),
    tls: {
      ca: options.ca,
      cert: options.cert,
      key: options.key,
      rejectUnauthorized: !cluster.skipTLSVerify,
    } as KubeCredentials["tls"],
    ...(cluster.caData === undefined && cluster.caFile !== undefined
      ? { caFile: cluster.caFile }
      : {}),
    headers: async () => {
      const fresh: https.RequestOptions = {};
      await config.applyToHTTPSOptions(fresh);
      (fresh.agent as https.Agent | undefined)?.destroy();
      return Object.fromEntries(
        Object.entries(fresh.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)]),
      );
    },
  };
}

/** Loads the credentials. Throws with a clear message when there are none. */
export async function loadCredentials(
  options: { kubeconfig: string; master: string; env: Record<string, string | undefined> },
): Promise<KubeCredentials> {
  if (options.kubeconfig !== "") return await fromKubeconfig(options.kubeconfig, options.master);
  if (options.env["KUBERNETES_SERVICE_HOST"] !== undefined) {
    return inCluster(options.env, options.master);
  }
  if (options.master !== "") {
    return { server: new URL(options.master), tls: {}, headers: () => Promise.resolve({}) };
  }
  throw new Error(
    "no Kubernetes configuration: set --kubeconfig (or KUBECONFIG) or --master, or run in a pod",
  );
}
