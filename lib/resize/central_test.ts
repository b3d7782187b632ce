import { ok, strictEqual } from "node:assert/strict";
import { centralResizerProblem } from "./central.ts";

const lease = {
  name: "external-resizer-hostpath-csi-k8s-io",
  namespace: "kube-system",
  holder: "resizer-0",
  renewTime: "2026-12-02T13:00:00.000000Z",
  durationSeconds: 15,
};
const now = Date.parse("2026-12-02T13:00:10Z");

Deno.test("centralResizerProblem(): a Lease renewed within its duration is a running external-resizer", () => {
  ok(
    centralResizerProblem(lease, now)?.includes("kube-system/external-resizer-hostpath-csi-k8s-io"),
  );
  strictEqual(centralResizerProblem(lease, now + 60_000), undefined);
  strictEqual(centralResizerProblem({ ...lease, holder: "" }, now), undefined);
  strictEqual(centralResizerProblem(undefined, now), undefined);
});
