/**
 * Runtime floor 2 (bench/floor.ts): the least an agent must do, through the
 * agent's own modules: open the CSI connection and make one call, and hold
 * one watch of PersistentVolumeClaims open. Its RSS and CPU are the floor
 * under the agent's: Bun plus grpc-js and protobufjs plus fetch over TLS.
 *
 *   csi_and_watch CSI_ADDRESS KUBECONFIG
 */
import { openCsiConnection } from "../../lib/csi/connection.ts";
import { loadCredentials } from "../../lib/kube/credentials.ts";
import { createKubeRest } from "../../lib/kube/rest.ts";
import { createLogger } from "../../lib/log/logger.ts";

async function main(): Promise<void> {
  const [address = "", kubeconfig = ""] = process.argv.slice(2);
  const logger = createLogger({ verbosity: 0 });
  const csi = openCsiConnection(address, { timeoutMs: 10_000, logger });
  await csi.call("GetPluginInfo", {});
  const credentials = await loadCredentials({ kubeconfig, master: "", env: {} });
  const rest = createKubeRest(credentials, {
    userAgent: "floor",
    budget: { qps: 5, burst: 10 },
  });
  const signal = new AbortController().signal;
  let opened = false;
  void rest.stream(
    {
      method: "GET",
      path: "/api/v1/persistentvolumeclaims",
      query: { watch: true, allowWatchBookmarks: true },
    },
    {
      signal,
      inactivityMs: 600_000,
      onLine: () => {},
      onOpen: () => {
        if (!opened) console.log("ready");
        opened = true;
      },
    },
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
