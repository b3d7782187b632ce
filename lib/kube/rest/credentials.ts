/**
 * Where Kubernetes credentials come from. The agent's, as upstream: a
 * kubeconfig (--kubeconfig, or KUBECONFIG folded into it by lib/config), else
 * the in-cluster ServiceAccount. A user's command (explain) finds and merges
 * kubeconfigs as kubectl does and may name a context. --master overrides the
 * server URL.
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
import { join } from "node:path";
import type { TlsSettings } from "../../runtime/platform.ts";
import {
  chooseContext,
  type ChosenContext,
  type Kubeconfig,
  type KubeconfigUser,
  mergeKubeconfigs,
} from "./kubeconfig.ts";
import { readKubeconfigs, userKubeconfigSearch } from "./kubeconfig_files.ts";

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

function fileOrData(file: string | undefined, data: string | undefined): Buffer | undefined {
  if (data !== undefined) return Buffer.from(data, "base64");
  if (file !== undefined) return readFileSync(file);
  return undefined;
}

function userHeaders(user: KubeconfigUser): () => Promise<Record<string, string>> {
  if (user.token !== undefined) return bearer(() => user.token ?? "");
  if (user.tokenFile !== undefined) return bearer(fileToken(user.tokenFile));
  if (user.username !== undefined) {
    const basic = Buffer.from(`${user.username}:${user.password ?? ""}`).toString("base64");
    return () => Promise.resolve({ authorization: `Basic ${basic}` });
  }
  return () => Promise.resolve({});
}

/** The credentials of a kubeconfig's context; plugins are delegated to client-node. */
async function fromContext(
  config: Kubeconfig,
  chosen: ChosenContext,
  master: string,
): Promise<KubeCredentials> {
  const { cluster, user } = chosen;
  if (user.exec !== undefined || user["auth-provider"] !== undefined) {
    return await withClientNode(config, chosen.name, master);
  }
  const tls: KubeCredentials["tls"] = {
    rejectUnauthorized: cluster["insecure-skip-tls-verify"] !== true,
  };
  const ca = fileOrData(cluster["certificate-authority"], cluster["certificate-authority-data"]);
  const cert = fileOrData(user["client-certificate"], user["client-certificate-data"]);
  const key = fileOrData(user["client-key"], user["client-key-data"]);
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
    ...(caFile === undefined ? {} : { caFile }),
    headers: userHeaders(user),
  };
}

/** Exec and auth-provider plugins: client-node knows them all; loaded only here. */
async function withClientNode(
  merged: Kubeconfig,
  context: string,
  master: string,
): Promise<KubeCredentials> {
  const { KubeConfig } = await import("@kubernetes/client-node");
  const config = new KubeConfig();
  // The merged files, their paths already absolute, in the kubeconfig format client-node parses.
  config.loadFromString(JSON.stringify({ ...merged, "current-context": context }));
  const cluster = config.getCurrentCluster();
  if (cluster === null) throw new Error(`kubeconfig context ${context}: no cluster`);
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

/** The agent's credentials: its one kubeconfig, else in-cluster, else --master alone. */
export async function loadCredentials(options: CredentialOptions): Promise<KubeCredentials> {
  const { kubeconfig, master } = options;
  if (kubeconfig === "") return withoutKubeconfig(options);
  const files = await readKubeconfigs({ paths: [kubeconfig], needed: "every" });
  const merged = mergeKubeconfigs(files);
  return await fromContext(
    merged,
    chooseContext(merged, { context: "", source: kubeconfig }),
    master,
  );
}

/**
 * A user's credentials, found and merged as kubectl finds them (see
 * kubeconfig_files.ts), with the context's namespace ("" when it sets none,
 * or without a kubeconfig).
 */
export async function loadUserCredentials(
  options: CredentialOptions & { context: string },
): Promise<{ credentials: KubeCredentials; namespace: string }> {
  const files = await readKubeconfigs(userKubeconfigSearch(options.kubeconfig, options.env));
  if (files.length === 0) {
    if (options.context !== "") {
      throw new Error(
        `no Kubernetes configuration for --context ${options.context}: no kubeconfig found ` +
          "(--kubeconfig, KUBECONFIG, ~/.kube/config)",
      );
    }
    return { credentials: withoutKubeconfig(options), namespace: "" };
  }
  const merged = mergeKubeconfigs(files);
  const source = files.map((file) => file.path).join(":");
  const chosen = chooseContext(merged, { context: options.context, source });
  return {
    credentials: await fromContext(merged, chosen, options.master),
    namespace: chosen.namespace,
  };
}

interface CredentialOptions {
  kubeconfig: string;
  master: string;
  env: Record<string, string | undefined>;
}

/** In-cluster, else --master alone; throws with a clear message when there is neither. */
function withoutKubeconfig(options: CredentialOptions): KubeCredentials {
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
