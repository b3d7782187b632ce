/**
 * deploy/ as an operator gets it: `kubectl kustomize deploy` and `helm lint`
 * / `helm template` of deploy/helm succeed, render what the agent needs
 * (downward-API env, probes on its real HTTP endpoint, flags its own parser
 * accepts, restricted security context, RBAC bound to its ServiceAccount),
 * Helm's defaults equal the kustomize base, and Helm's values change what
 * they say. Every RBAC rule in deploy/rbac.yaml says why it is granted.
 */

import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { ensureClusterBinaries } from "../cluster/build.ts";
import { ensureHelm } from "../cluster/helm_build.ts";
import { checkBindings, checkDaemonSet, parseAgentArgs } from "./daemonset_checks.ts";
import {
  agentContainer,
  CHART_DIR,
  commentedRules,
  type K8sObject,
  RBAC_FILE,
  renderHelm,
  renderKustomize,
  rulesOf,
  run,
  theObject,
} from "./render.ts";

const NAMESPACE = "csi-node-provisioner";

async function tools(): Promise<{ kubectl: string; helm: string }> {
  const [binaries, helm] = await Promise.all([ensureClusterBinaries(), ensureHelm()]);
  return { kubectl: binaries.kubectl, helm };
}

function kinds(objects: K8sObject[]): string[] {
  return objects.map((object) => object.kind).sort();
}

Deno.test("kubectl kustomize deploy renders a complete, consistent deployment", async () => {
  const { kubectl } = await tools();
  const { objects } = await renderKustomize(kubectl);
  deepStrictEqual(kinds(objects), [
    "CSIDriver",
    "ClusterRole",
    "ClusterRoleBinding",
    "DaemonSet",
    "Namespace",
    "Role",
    "RoleBinding",
    "ServiceAccount",
    "StorageClass",
    "StorageClass",
  ]);
  for (const object of objects) {
    const clusterScoped = ["Namespace", "ClusterRole", "ClusterRoleBinding", "CSIDriver"]
      .concat("StorageClass").includes(object.kind);
    strictEqual(object.metadata.namespace, clusterScoped ? undefined : NAMESPACE, object.kind);
  }
  // The example driver is privileged: its namespace must allow it.
  strictEqual(
    theObject(objects, "Namespace").metadata.labels?.["pod-security.kubernetes.io/enforce"],
    "privileged",
  );
  checkDaemonSet(objects);
  checkBindings(objects);
});

Deno.test("every rule of deploy/rbac.yaml says why it is granted", async () => {
  const rules = commentedRules(await Deno.readTextFile(RBAC_FILE));
  ok(rules.length >= 8, `found ${rules.length} rules`);
  for (const rule of rules) {
    ok(rule.comment.length > 20, `${rule.role} ${rule.resources} has no comment`);
  }
  // Granting update (PUT) or wildcards would defeat least privilege. The agents' Leases are
  // replaced, within upstream's grant on leases, so that upstream's RBAC keeps working.
  for (const rule of rules) {
    ok(!rule.verbs.includes("*") && !rule.resources.includes("*"), `${rule.resources}: wildcard`);
    const leases = rule.resources.length === 1 && rule.resources[0] === "leases";
    ok(leases || !rule.verbs.includes("update"), `${rule.resources}: update is never used`);
  }
  ok(!rules.some((rule) => rule.resources.includes("secrets")), "Secrets are not granted");
});

Deno.test("helm lint passes and helm template's defaults equal the kustomize base", async () => {
  const { kubectl, helm } = await tools();
  const lint = await run(helm, ["lint", "--strict", CHART_DIR]);
  ok(lint.includes("0 chart(s) failed"), lint);
  const base = (await renderKustomize(kubectl)).objects;
  const chart = (await renderHelm(helm, { namespace: NAMESPACE })).objects;
  // The chart leaves the namespace to `helm install --create-namespace` by default.
  deepStrictEqual(kinds(chart), kinds(base).filter((kind) => kind !== "Namespace"));
  for (const kind of ["ClusterRole", "Role"]) {
    deepStrictEqual(rulesOf(theObject(chart, kind)), rulesOf(theObject(base, kind)), kind);
  }
  const [ours, theirs] = [chart, base].map((objects) =>
    agentContainer(theObject(objects, "DaemonSet"))
  );
  for (const field of ["args", "env", "ports", "livenessProbe", "readinessProbe"]) {
    deepStrictEqual(ours![field], theirs![field], field);
  }
  for (const field of ["resources", "securityContext", "volumeMounts"]) {
    deepStrictEqual(ours![field], theirs![field], field);
  }
  checkDaemonSet(chart);
  checkBindings(chart);
});

Deno.test("helm values change the flags, the RBAC and the pod as documented", async () => {
  const { helm } = await tools();
  const render = async (set: string[]) => (await renderHelm(helm, { set })).objects;
  const argsOf = (objects: K8sObject[]) => agentContainer(theObject(objects, "DaemonSet")).args;

  // Upstream's owner, the DaemonSet: its Pod is read, the Node is not.
  const byDaemonSet = await render(["capacity.ownerMode=daemonset", "capacity.pollInterval=15s"]);
  ok(argsOf(byDaemonSet).includes("--capacity-ownerref-level=1"));
  ok(!argsOf(byDaemonSet).includes("--capacity-owner-node"));
  ok(argsOf(byDaemonSet).includes("--capacity-poll-interval=15s"));
  const grants = (objects: K8sObject[], kind: string, resource: string) =>
    rulesOf(theObject(objects, kind)).some((rule) => rule.resources.includes(resource));
  ok(grants(byDaemonSet, "Role", "pods") && !grants(byDaemonSet, "ClusterRole", "nodes"));
  const byNode = await render([]);
  ok(argsOf(byNode).includes("--capacity-owner-node"));
  ok(!grants(byNode, "Role", "pods") && grants(byNode, "ClusterRole", "nodes"));

  const tuned = await render([
    "logLevel=5",
    "workerThreads=3",
    "kubeApi.qps=20",
    "kubeApi.burst=40",
    "metrics.port=9090",
    "extraArgs={--extra-create-metadata}",
    "rbac.secrets=true",
    "priorityClassName=system-cluster-critical",
    "nodeSelector.disk=local",
  ]);
  const parsed = parseAgentArgs(argsOf(tuned));
  ok(parsed.kind === "run", JSON.stringify(parsed));
  strictEqual(parsed.config.verbosity, 5);
  strictEqual(parsed.config.workerThreads, 3);
  strictEqual(parsed.config.kubeApiQps, 20);
  strictEqual(parsed.config.kubeApiBurst, 40);
  strictEqual(parsed.config.httpEndpoint, ":9090");
  strictEqual(parsed.config.extraCreateMetadata, true);
  ok(
    rulesOf(theObject(tuned, "ClusterRole")).some((rule) => rule.resources.includes("secrets")),
  );
  const pod = (theObject(tuned, "DaemonSet").spec as { template: { spec: K8sObject } }).template
    .spec;
  strictEqual(pod.priorityClassName, "system-cluster-critical");
  deepStrictEqual(pod.nodeSelector, { "kubernetes.io/os": "linux", disk: "local" });

  // Snapshot support off: no VolumeSnapshot RBAC, no orphan sweep; clones keep theirs.
  ok(grants(byNode, "ClusterRole", "volumesnapshots"));
  const noSnapshots = await render(["snapshots.enabled=false"]);
  ok(!grants(noSnapshots, "ClusterRole", "volumesnapshots"));
  ok(!grants(noSnapshots, "ClusterRole", "volumesnapshotcontents"));
  ok(grants(noSnapshots, "ClusterRole", "persistentvolumes"));
  ok(argsOf(noSnapshots).includes("--snapshot-orphan-sweep-interval=0"));
  ok(!argsOf(byNode).some((arg) => arg.startsWith("--snapshot-orphan-sweep-interval")));

  const noCapacity = await render(["capacity.enabled=false"]);
  ok(!argsOf(noCapacity).some((arg) => arg.startsWith("--enable-capacity")));
  ok(!noCapacity.some((object) => object.kind === "Role"), "no Role without capacity");
  await rejects(render(["capacity.ownerMode=pods"]), /capacity.ownerMode must be/);
});
