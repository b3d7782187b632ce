import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { recordingRest } from "../../tests/fakes/kube_rest.ts";
import { ExplainReader } from "./explain_reads.ts";
import { apiError } from "./rest/types.ts";

const status = (code: number) => apiError(code, JSON.stringify({ reason: "x", message: "no" }));

Deno.test("ExplainReader.agentLeases: the driver's Leases everywhere; a refusal or a bad selector is none", async () => {
  const lease = {
    metadata: { name: "l", resourceVersion: "1", labels: { "csi.storage.k8s.io/managed-by": "m" } },
    spec: { holderIdentity: "node-a", leaseDurationSeconds: 60, renewTime: "t" },
  };
  const rest = recordingRest([{ items: [lease] }, status(403), status(400)]);
  const reader = new ExplainReader(rest);
  deepStrictEqual((await reader.agentLeases("hostpath.csi.k8s.io"))?.map((l) => l.node), [
    "node-a",
  ]);
  strictEqual(rest.requests[0]!.path, "/apis/coordination.k8s.io/v1/leases");
  strictEqual(await reader.agentLeases("hostpath.csi.k8s.io"), undefined);
  strictEqual(await reader.agentLeases("example.com/other"), undefined);
});
