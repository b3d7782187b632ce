/**
 * Crash-only on connection loss, as upstream: once the handshake is done, a
 * channel that leaves READY means the driver went away, and the agent exits
 * so that the kubelet restarts it beside the restarted driver.
 */
import * as grpc from "@grpc/grpc-js";
import type { CsiConnection } from "./connection.ts";

/** Resolves "lost" when the channel leaves READY, "stopped" when `signal` aborts first. */
export async function watchConnectionLoss(
  connection: Pick<CsiConnection, "state" | "waitForStateChange">,
  signal: AbortSignal,
): Promise<"lost" | "stopped"> {
  const aborted = new Promise<"stopped">((resolve) => {
    if (signal.aborted) resolve("stopped");
    signal.addEventListener("abort", () => resolve("stopped"), { once: true });
  });
  while (!signal.aborted) {
    const state = connection.state(false);
    if (state !== grpc.connectivityState.READY) return "lost";
    // Re-arm at least once a minute so a watch never outlives a stopped agent by much.
    const changed = connection.waitForStateChange(state, Date.now() + 60_000).then(() =>
      "changed" as const
    );
    if ((await Promise.race([changed, aborted])) === "stopped") return "stopped";
  }
  return "stopped";
}
