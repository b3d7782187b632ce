/**
 * The node-confinement policy as an operator gets it: the kustomize
 * component and the Helm value (off by default) render the same
 * ValidatingAdmissionPolicy and binding, each naming its own agents'
 * ServiceAccount. tests/integration/node_policy_test.ts applies it to a real
 * API server.
 */

import { deepStrictEqual, ok } from "node:assert/strict";
import { join } from "node:path";
import { ensureClusterBinaries } from "../cluster/build.ts";
import { ensureHelm } from "../cluster/helm_build.ts";
import { DEPLOY_DIR, type K8sObject, renderHelm, run, theObject } from "./render.ts";
import { parseObjects } from "./render.ts";

const POLICY = "ValidatingAdmissionPolicy";
const BINDING = "ValidatingAdmissionPolicyBinding";

/** The policy's spec with its agent's username left out. */
function specWithoutAgent(policy: K8sObject): unknown {
  const spec = structuredClone(policy.spec) as { matchConditions: { expression: string }[] };
  const condition = spec.matchConditions[0]!;
  ok(condition.expression.startsWith("request.userInfo.username in"), condition.expression);
  condition.expression = "";
  return spec;
}

Deno.test("the node-confinement component and the Helm value render the same policy", async () => {
  const [binaries, helm] = await Promise.all([ensureClusterBinaries(), ensureHelm()]);
  const component = parseObjects(
    await run(binaries.kubectl, ["kustomize", join(DEPLOY_DIR, "components", "node-confinement")]),
  );
  const off = (await renderHelm(helm)).objects;
  ok(!off.some((object) => object.kind === POLICY || object.kind === BINDING));
  const on = (await renderHelm(helm, {
    release: "r",
    namespace: "ns",
    set: ["nodeConfinement.enabled=true"],
  }))
    .objects;
  const [ours, theirs] = [theObject(on, POLICY), theObject(component, POLICY)];
  deepStrictEqual(specWithoutAgent(ours), specWithoutAgent(theirs));
  const agent = (policy: K8sObject) =>
    (policy.spec as { matchConditions: { expression: string }[] }).matchConditions[0]!.expression;
  ok(agent(theirs).includes("'system:serviceaccount:csi-node-provisioner:csi-node-provisioner'"));
  ok(agent(ours).includes("'system:serviceaccount:ns:r-csi-node-provisioner'"), agent(ours));
  const binding = theObject(on, BINDING).spec as { policyName: string };
  deepStrictEqual(binding.policyName, ours.metadata.name);
  deepStrictEqual(
    theObject(component, BINDING).spec,
    { policyName: theirs.metadata.name, validationActions: ["Deny"] },
  );
});
