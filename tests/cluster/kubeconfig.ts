/** Kubeconfig files (one per identity) and the admin's API clients. */

import {
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  KubeConfig,
  KubernetesObjectApi,
  RbacAuthorizationV1Api,
  StorageV1Api,
} from "@kubernetes/client-node";

export interface KubeconfigSpec {
  /** https://127.0.0.1:PORT */
  server: string;
  /** PEM bundle the server's certificate chains to. */
  caPem: string;
  /** Bearer token: a static admin token or a ServiceAccount token. */
  token: string;
  /** Names the user and context entries; purely informational. */
  userName: string;
}

/** Writes a kubeconfig (JSON, which is valid YAML) readable by kubectl, Go and client-node. */
export async function writeKubeconfig(path: string, spec: KubeconfigSpec): Promise<string> {
  const config = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{
      name: "test-cluster",
      cluster: { server: spec.server, "certificate-authority-data": btoa(spec.caPem) },
    }],
    users: [{ name: spec.userName, user: { token: spec.token } }],
    contexts: [{ name: spec.userName, context: { cluster: "test-cluster", user: spec.userName } }],
    "current-context": spec.userName,
  };
  await Deno.writeTextFile(path, JSON.stringify(config, null, 2) + "\n", { mode: 0o600 });
  return path;
}

/** The admin's clients, all from one KubeConfig. */
export interface AdminClients {
  kubeConfig: KubeConfig;
  core: CoreV1Api;
  storage: StorageV1Api;
  rbac: RbacAuthorizationV1Api;
  apps: AppsV1Api;
  coordination: CoordinationV1Api;
  /** Generic create/patch/delete of any object. */
  objects: KubernetesObjectApi;
}

/**
 * A KubeConfig whose connections speak HTTP/1.1 only.
 *
 * Why: client-node 2.x sends requests through undici, which negotiates HTTP/2
 * with kube-apiserver. Under Deno 2.9.6, node:http2 crashes the whole process
 * (segfault, or `nghttp2_session.c: find_stream_on_goaway_func: Assertion
 * 'stream->closed_next == NULL' failed`) when the API server shuts down and
 * sends GOAWAY on such connections, which every cluster stop() does.
 */
export class Http1KubeConfig extends KubeConfig {
  override createDispatcherOptions(
    ...args: Parameters<KubeConfig["createDispatcherOptions"]>
  ): ReturnType<KubeConfig["createDispatcherOptions"]> {
    const options = super.createDispatcherOptions(...args);
    if (options.type !== "agent") return options;
    // undici's Client spreads `connect` over its own allowH2 default.
    return {
      ...options,
      connect: { ...options.connect, allowH2: false } as typeof options.connect,
    };
  }
}

/** Loads a kubeconfig file into an Http1KubeConfig: use this for every client in tests. */
export function loadKubeConfig(path: string): KubeConfig {
  const kubeConfig = new Http1KubeConfig();
  kubeConfig.loadFromFile(path);
  return kubeConfig;
}

export function clientsFromKubeconfig(path: string): AdminClients {
  const kubeConfig = loadKubeConfig(path);
  return {
    kubeConfig,
    core: kubeConfig.makeApiClient(CoreV1Api),
    storage: kubeConfig.makeApiClient(StorageV1Api),
    rbac: kubeConfig.makeApiClient(RbacAuthorizationV1Api),
    apps: kubeConfig.makeApiClient(AppsV1Api),
    coordination: kubeConfig.makeApiClient(CoordinationV1Api),
    objects: KubernetesObjectApi.makeApiClient(kubeConfig),
  };
}
