/**
 * One CSI call straight to a driver's socket, bypassing the agent and any
 * recording proxy: what someone else on the node (an admin tool, another
 * provisioner) would do behind the agent's back.
 */

import * as grpc from "@grpc/grpc-js";
import { loadCsiServices } from "../../lib/csi/proto.ts";

export type CsiService = "Identity" | "Controller" | "Node";

/** Calls `method` of `service` on the unix socket at `socketPath`; resolves with the decoded answer. */
export async function callDriver(
  socketPath: string,
  call: { service: CsiService; method: string; request: Record<string, unknown> },
): Promise<Record<string, unknown>> {
  const Service = loadCsiServices()[call.service];
  const client = new Service(`unix://${socketPath}`, grpc.credentials.createInsecure());
  try {
    const method = (client as unknown as Record<string, unknown>)[call.method];
    if (typeof method !== "function") {
      throw new Error(`the project's CSI schema has no ${call.service}.${call.method}`);
    }
    return await new Promise((resolve, reject) => {
      method.call(
        client,
        call.request,
        { deadline: Date.now() + 30_000 },
        (error: grpc.ServiceError | null, response: Record<string, unknown>) =>
          error ? reject(error) : resolve(response),
      );
    });
  } finally {
    client.close();
  }
}
