/**
 * Runtime floor 2 (bench/floor.ts): the least an agent must do, through the
 * agent's own modules: open the CSI connection and make one call, and hold
 * one watch of PersistentVolumeClaims open. Its RSS and CPU are the floor
 * under the agent's: Bun plus grpc-js and protobufjs plus fetch over TLS.
 *
 *   csi_and_watch CSI_ADDRESS KUBECONFIG
 */
import { openCsiConnection } from "../../lib/csi/connection.ts";
import { createLogger } from "../../lib/log/logger.ts";
import { holdClaimWatch } from "./claim_watch.ts";

async function main(): Promise<void> {
  // As hello.ts: SIGTERM ends it as an exit, on which Bun writes its bytecode order.
  process.on("SIGTERM", () => process.exit(0));
  const [address = "", kubeconfig = ""] = process.argv.slice(2);
  const logger = createLogger({ verbosity: 0 });
  const csi = openCsiConnection(address, { timeoutMs: 10_000, logger });
  await csi.call("GetPluginInfo", {});
  await holdClaimWatch(kubeconfig);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
