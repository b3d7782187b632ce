/**
 * Where the Kubernetes credentials come from, as upstream: --kubeconfig (or
 * KUBECONFIG, already folded into it by lib/config), else the in-cluster
 * ServiceAccount; --master overrides the server URL.
 */
import process from "node:process";
import { KubeConfig } from "@kubernetes/client-node";

/** Loads the client configuration. Throws with a clear message when there is none. */
export function loadKubeConfig(options: { kubeconfig: string; master: string }): KubeConfig {
  const config = new KubeConfig();
  if (options.kubeconfig !== "") {
    config.loadFromFile(options.kubeconfig);
  } else if (process.env["KUBERNETES_SERVICE_HOST"] !== undefined) {
    config.loadFromCluster();
  } else if (options.master === "") {
    throw new Error(
      "no Kubernetes configuration: set --kubeconfig (or KUBECONFIG) or --master, or run in a pod",
    );
  } else {
    config.loadFromClusterAndUser(
      { name: "master", server: options.master, skipTLSVerify: false },
      { name: "anonymous" },
    );
  }
  if (options.master !== "") {
    const cluster = config.getCurrentCluster();
    if (cluster !== null) (cluster as { server: string }).server = options.master;
  }
  return config;
}
