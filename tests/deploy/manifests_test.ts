/**
 * deploy/ as an operator gets it: `kubectl kustomize deploy` and `helm lint`
 * / `helm template` of deploy/helm succeed, render what the agent needs
 * (downward-API env, probes on its real HTTP endpoint, flags its own parser
 * accepts, restricted security context, RBAC bound to its ServiceAccount),
 * Helm's defaults equal the kustomize base, and Helm's values change what
 * they say. Every RBAC rule in deploy/rbac.yaml says why it is granted.
 */

import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { join, relative } from "node:path";
import { ensureClusterBinaries } from "../cluster/build.ts";
import { ensureHelm } from "../cluster/helm_build.ts";
import { checkBindings, checkDaemonSet, parseAgentArgs } from "./daemonset_checks.ts";
import {
  agentContainer,
  CHART_DIR,
  commentedRules,
  DEPLOY_DIR,
  EXAMPLE_DIR,
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

Deno.test("kubectl kustomize deploy renders the agent alone, beside an existing driver", async () => {
  const { kubectl } = await tools();
  const { objects } = await renderKustomize(kubectl);
  deepStrictEqual(kinds(objects), [
    "ClusterRole",
    "ClusterRoleBinding",
    "DaemonSet",
    "Namespace",
    "Role",
    "RoleBinding",
    "ServiceAccount",
  ]);
  checkNamespaces(objects);
  // The agent mounts the driver's socket directory from the host: a hostPath volume.
  strictEqual(
    theObject(objects, "Namespace").metadata.labels?.["pod-security.kubernetes.io/enforce"],
    "privileged",
  );
  checkDaemonSet(objects, "none");
  checkBindings(objects);
  strictEqual(socketHostDir(theObject(objects, "DaemonSet")), PLACEHOLDER_SOCKET_DIR);
});

/**
 * The overlay deploy/kustomization.yaml's comment shows, as an operator copies
 * it, with the base's URL replaced by `base`.
 */
async function documentedOverlay(base: string): Promise<string> {
  const comment = (await Deno.readTextFile(join(DEPLOY_DIR, "kustomization.yaml")))
    .split("\n").filter((line) => line.startsWith("#")).map((line) => line.slice(1));
  const start = comment.findIndex((line) => line.includes("# overlay/kustomization.yaml"));
  const end = comment.findIndex((line, index) => index > start && line.trim() === "");
  ok(start >= 0 && end > start, "deploy/kustomization.yaml shows an overlay");
  return comment.slice(start + 1, end).map((line) => line.slice(2)).join("\n")
    .replace(/- https:\/\/github\.com\/\S+\/\/deploy\?ref=TAG/, `- ${base}`);
}

Deno.test("the overlay deploy/kustomization.yaml documents sets the socket directory and tolerations", async () => {
  const { kubectl } = await tools();
  const dir = await Deno.makeTempDir();
  try {
    // kustomize takes a base directory only as a relative path.
    const overlay = await documentedOverlay(relative(dir, DEPLOY_DIR));
    await Deno.writeTextFile(join(dir, "kustomization.yaml"), overlay);
    const daemonSet = theObject((await renderKustomize(kubectl, dir)).objects, "DaemonSet");
    strictEqual(socketHostDir(daemonSet), "/var/lib/kubelet/plugins/YOUR-DRIVER");
    deepStrictEqual(
      (daemonSet.spec as { template: { spec: K8sObject } }).template.spec.tolerations,
      [{ operator: "Exists" }],
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("examples/hostpath adds the hostpath plugin, its registrar, CSIDriver and classes", async () => {
  const { kubectl } = await tools();
  const { objects } = await renderKustomize(kubectl, EXAMPLE_DIR);
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
  checkNamespaces(objects);
  checkDaemonSet(objects, "example");
  checkBindings(objects);
  checkExampleSocket(theObject(objects, "DaemonSet"));
});

/** Namespaced objects are in the agent's namespace, the others have none. */
function checkNamespaces(objects: K8sObject[]): void {
  const clusterScoped = ["Namespace", "ClusterRole", "ClusterRoleBinding", "CSIDriver"]
    .concat("StorageClass");
  for (const object of objects) {
    const expected = clusterScoped.includes(object.kind) ? undefined : NAMESPACE;
    strictEqual(object.metadata.namespace, expected, object.kind);
  }
}

const AGENT = "csi-node-provisioner";
const PLACEHOLDER_SOCKET_DIR = "/var/lib/kubelet/plugins/SET-YOUR-DRIVER";

type PodSpec = {
  containers: { name: string; image: string; args?: string[] }[];
  volumes: { name: string; hostPath?: { path: string; type?: string } }[];
};

function podOf(daemonSet: K8sObject): PodSpec {
  return (daemonSet.spec as { template: { spec: PodSpec } }).template.spec;
}

function socketHostDir(daemonSet: K8sObject): string | undefined {
  return podOf(daemonSet).volumes.find((volume) => volume.name === "socket-dir")?.hostPath?.path;
}

/** The agent and the registrar use the plugin's socket, in a directory the plugin may create. */
function checkExampleSocket(daemonSet: K8sObject): void {
  const socketDir = podOf(daemonSet).volumes.find((volume) => volume.name === "socket-dir");
  deepStrictEqual(socketDir?.hostPath, {
    path: "/var/lib/kubelet/plugins/csi-hostpath",
    type: "DirectoryOrCreate",
  });
  const registrar = podOf(daemonSet).containers.find((c) => c.name === "node-driver-registrar");
  ok(
    registrar?.args?.includes(
      "--kubelet-registration-path=/var/lib/kubelet/plugins/csi-hostpath/csi.sock",
    ),
  );
}

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
  checkDaemonSet(chart, "none");
  checkBindings(chart);
  strictEqual(socketHostDir(theObject(chart, "DaemonSet")), PLACEHOLDER_SOCKET_DIR);
});

Deno.test("exampleDriver.enabled renders what examples/hostpath does", async () => {
  const { kubectl, helm } = await tools();
  const example = (await renderKustomize(kubectl, EXAMPLE_DIR)).objects;
  const chart = (await renderHelm(helm, { set: ["exampleDriver.enabled=true"] })).objects;
  deepStrictEqual(kinds(chart), kinds(example).filter((kind) => kind !== "Namespace"));
  checkDaemonSet(chart, "example");
  checkExampleSocket(theObject(chart, "DaemonSet"));
  const [ours, theirs] = [chart, example].map((objects) => podOf(theObject(objects, "DaemonSet")));
  const byName = <T extends { name: string }>(items: T[]) =>
    [...items].sort((a, b) => a.name.localeCompare(b.name));
  // The agent container is compared with deploy/'s in the test above.
  const drivers = (pod: PodSpec) => byName(pod.containers.filter((c) => c.name !== AGENT));
  deepStrictEqual(drivers(ours!), drivers(theirs!));
  deepStrictEqual(byName(ours!.volumes), byName(theirs!.volumes));
  deepStrictEqual(theObject(chart, "CSIDriver").spec, theObject(example, "CSIDriver").spec);
  const classes = (objects: K8sObject[]) =>
    objects.filter((object) => object.kind === "StorageClass")
      .map(({ metadata, ...rest }) => ({ ...rest, name: metadata.name }));
  deepStrictEqual(byName(classes(chart)), byName(classes(example)));
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
  // values.schema.json names the allowed modes.
  await rejects(render(["capacity.ownerMode=pods"]), /ownerMode.: value must be one of/);
});

Deno.test("helm values set the image digest, the rollout, the socket, tolerations and GKE's quota", async () => {
  const { helm } = await tools();
  const render = async (set: string[]) => (await renderHelm(helm, { set })).objects;
  const digest = `sha256:${"ab".repeat(32)}`;
  const objects = await render([
    "image.repository=registry.example/cnp",
    `image.digest=${digest}`,
    "image.tag=ignored",
    "updateStrategy.rollingUpdate.maxUnavailable=25%",
    "revisionHistoryLimit=3",
    "terminationGracePeriodSeconds=60",
    "driver.socketDir=/var/lib/kubelet/plugins/topolvm.io/node/",
    "driver.socketName=csi-topolvm.sock",
    "tolerations[0].operator=Exists",
    "priorityClassQuota.enabled=true",
  ]);
  const daemonSet = theObject(objects, "DaemonSet");
  const agent = agentContainer(daemonSet);
  strictEqual(agent.image, `registry.example/cnp@${digest}`);
  const spec = daemonSet.spec as Record<string, unknown> & { template: { spec: K8sObject } };
  deepStrictEqual(spec.updateStrategy, {
    type: "RollingUpdate",
    rollingUpdate: { maxUnavailable: "25%" },
  });
  strictEqual(spec.revisionHistoryLimit, 3);
  strictEqual(spec.template.spec.terminationGracePeriodSeconds, 60);
  deepStrictEqual(spec.template.spec.tolerations, [{ operator: "Exists" }]);
  strictEqual(socketHostDir(daemonSet), "/var/lib/kubelet/plugins/topolvm.io/node");
  ok(agent.args.includes("--csi-address=/csi/csi-topolvm.sock"), agent.args.join(" "));
  // GKE admits system-node-critical pods outside kube-system only under such a quota.
  const quota = theObject(objects, "ResourceQuota");
  strictEqual(quota.metadata.namespace, NAMESPACE);
  deepStrictEqual((quota.spec as { scopeSelector: unknown }).scopeSelector, {
    matchExpressions: [{
      scopeName: "PriorityClass",
      operator: "In",
      values: ["system-node-critical"],
    }],
  });
  ok(!(await render([])).some((object) => object.kind === "ResourceQuota"), "off by default");
  await rejects(
    render(["priorityClassQuota.enabled=true", "priorityClassName="]),
    /priorityClassQuota.enabled needs a priorityClassName/,
  );
});

Deno.test("values.schema.json: helm lint rejects values of the wrong type, passes the defaults", async () => {
  const { helm } = await tools();
  const lint = (set: string[]) =>
    run(helm, ["lint", "--strict", CHART_DIR, ...set.flatMap((value) => ["--set", value])]);
  ok((await lint([])).includes("0 chart(s) failed"));
  ok((await lint(["exampleDriver.enabled=true", "image.digest=sha256:" + "0".repeat(64)]))
    .includes("0 chart(s) failed"));
  for (
    const [value, complaint] of [
      ["image.repository=5", /\/image\/repository/],
      ["updateStrategy.rollingUpdate.maxUnavailable=true", /maxUnavailable/],
      ["maxUnavailable=1", /maxUnavailable/],
      ["image.digest=latest", /digest/],
      ["tolerations=true", /tolerations/],
      ["driver.socketDir=relative/dir", /socketDir/],
    ] as const
  ) {
    // lint fails (its complaint is on stdout); template says which value, on stderr.
    await rejects(lint([value]), /1 chart\(s\) failed/, value);
    await rejects(renderHelm(helm, { set: [value] }), complaint, value);
  }
});
