/**
 * Switching an existing driver's DaemonSet to this agent, as an operator
 * would: deploy/components/replace-csi-provisioner applied with kustomize to
 * upstream csi-driver-host-path v1.18.0's distributed DaemonSet, and the Helm
 * recipe (this chart as a subchart, its replaceCsiProvisioner template in the
 * driver's DaemonSet) applied to the same manifest. Both must keep the
 * container's args, env, mounts and socket, render the same container, bind
 * the missing permissions to the DaemonSet's ServiceAccount, and pass a
 * server-side dry run on a real API server.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { ensureClusterBinaries } from "../cluster/build.ts";
import { ensureHelm } from "../cluster/helm_build.ts";
import { loadUpstreamRbac } from "../cluster/rbac.ts";
import { dryRunAccepted, startValidationCluster } from "./apply.ts";
import { checkJournalOnHostPath, checkProbes, parseAgentArgs } from "./daemonset_checks.ts";
import {
  CHART_DIR,
  DEPLOY_DIR,
  type K8sObject,
  parseObjects,
  type PolicyRule,
  RBAC_FILE,
  rulesOf,
  run,
  theObject,
} from "./render.ts";
import { upstreamHostpathDaemonSet } from "./upstream_hostpath.ts";

const COMPONENT_DIR = join(DEPLOY_DIR, "components", "replace-csi-provisioner");
const NAMESPACE = "hostpath";
const IMAGE = "registry.example.com/csi-node-provisioner";

interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: unknown[];
  volumeMounts?: unknown[];
  securityContext?: Record<string, unknown>;
  ports?: { name: string; containerPort: number }[];
  livenessProbe?: { httpGet: { path: string; port: string } };
  readinessProbe?: { httpGet: { path: string; port: string } };
  [field: string]: unknown;
}

function podSpec(daemonSet: K8sObject): { containers: Container[]; [field: string]: unknown } {
  return (daemonSet.spec as { template: { spec: { containers: Container[] } } }).template.spec;
}

function container(daemonSet: K8sObject, name: string): Container {
  const found = podSpec(daemonSet).containers.find((candidate) => candidate.name === name);
  if (!found) throw new Error(`no container ${name}`);
  return found;
}

/** `kubectl kustomize` of an overlay with the component over a base holding the DaemonSet. */
async function renderComponent(kubectl: string, upstreamYaml: string): Promise<K8sObject[]> {
  const dir = mkdtempSync(join(tmpdir(), "component-"));
  try {
    mkdirSync(join(dir, "driver"));
    mkdirSync(join(dir, "overlay"));
    writeFileSync(join(dir, "driver", "csi-hostpath-plugin.yaml"), upstreamYaml);
    // The namespace is set in the base: the component reads it (see its kustomization.yaml).
    writeFileSync(
      join(dir, "driver", "kustomization.yaml"),
      `namespace: ${NAMESPACE}\nresources:\n  - csi-hostpath-plugin.yaml\n`,
    );
    writeFileSync(
      join(dir, "overlay", "kustomization.yaml"),
      [
        "resources:",
        "  - ../driver",
        "components:",
        `  - ${relative(join(dir, "overlay"), COMPONENT_DIR)}`,
        "images:",
        "  - name: csi-node-provisioner",
        `    newName: ${IMAGE}`,
        "",
      ].join("\n"),
    );
    return parseObjects(await run(kubectl, ["kustomize", join(dir, "overlay")]));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The README's Helm recipe, applied to upstream's manifest as a driver chart's template. */
function helmRecipeTemplate(upstreamYaml: string): string {
  const image = "          image: registry.k8s.io/sig-storage/csi-provisioner:v6.3.0\n";
  const include = '          {{- include "csi-node-provisioner.replaceCsiProvisioner" ' +
    ".Subcharts.csiNodeProvisioner | nindent 10 }}\n";
  // The csi-provisioner container's security context, the first of the file.
  const privileged = "            privileged: true\n";
  ok(upstreamYaml.includes(image) && upstreamYaml.includes(privileged), "upstream's manifest");
  return upstreamYaml.replace(image, include)
    .replace(privileged, `${privileged}            runAsUser: 0\n`);
}

/** `helm template` of a driver chart that has this chart as its subchart. */
async function renderHelmRecipe(helm: string, upstreamYaml: string): Promise<K8sObject[]> {
  const dir = mkdtempSync(join(tmpdir(), "helm-recipe-"));
  try {
    mkdirSync(join(dir, "templates"));
    cpSync(CHART_DIR, join(dir, "charts", "csi-node-provisioner"), { recursive: true });
    writeFileSync(
      join(dir, "Chart.yaml"),
      [
        "apiVersion: v2",
        "name: csi-driver-host-path",
        "version: 1.18.0",
        "dependencies:",
        "  - name: csi-node-provisioner",
        "    version: 0.1.0",
        "    alias: csiNodeProvisioner",
        "",
      ].join("\n"),
    );
    writeFileSync(
      join(dir, "templates", "csi-hostpath-plugin.yaml"),
      helmRecipeTemplate(upstreamYaml),
    );
    return parseObjects(
      await run(helm, [
        "template",
        "hostpath",
        dir,
        `--namespace=${NAMESPACE}`,
        ...[
          "daemonset.create=false",
          "serviceAccount.create=false",
          "serviceAccount.name=csi-provisioner",
          "csiDriver.create=false",
          "storageClasses=null",
          "capacity.ownerMode=pod",
          `image.repository=${IMAGE}`,
        ].flatMap((value) => ["--set", `csiNodeProvisioner.${value}`]),
      ]),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The binary deploy/Dockerfile's image starts (its ENTRYPOINT). */
function imageEntrypoint(): string {
  const dockerfile = readFileSync(join(DEPLOY_DIR, "Dockerfile"), "utf8");
  const entrypoint = /^ENTRYPOINT\s+(\[.*\])\s*$/m.exec(dockerfile);
  ok(entrypoint, "deploy/Dockerfile has an ENTRYPOINT in exec form");
  return (JSON.parse(entrypoint[1]!) as string[])[0]!;
}

/** What the swap must leave as upstream had it, and what it must add. */
function checkSwappedDaemonSet(rendered: K8sObject, upstream: K8sObject): void {
  const before = container(upstream, "csi-provisioner");
  const after = container(rendered, "csi-provisioner");
  for (const field of ["args", "env", "volumeMounts"] as const) {
    deepStrictEqual(after[field], before[field], `csi-provisioner ${field} kept`);
  }
  deepStrictEqual(after.securityContext, { ...before.securityContext, runAsUser: 0 });
  strictEqual(after.image, `${IMAGE}:0.1.0`);
  // Every other container, the volumes and the ServiceAccount are untouched.
  const others = (daemonSet: K8sObject) =>
    podSpec(daemonSet).containers.filter((candidate) => candidate.name !== "csi-provisioner");
  deepStrictEqual(others(rendered), others(upstream));
  deepStrictEqual(podSpec(rendered).volumes, podSpec(upstream).volumes);
  strictEqual(podSpec(rendered).serviceAccountName, "csi-provisioner");
  // The agent's parser takes the command line; the probes reach its HTTP endpoint.
  const [entrypoint, ...flags] = [...(after.command ?? []), ...(after.args ?? [])];
  strictEqual(entrypoint, imageEntrypoint(), "the command starts with the image's ENTRYPOINT");
  const parsed = parseAgentArgs(flags);
  ok(parsed.kind === "run", JSON.stringify(parsed));
  strictEqual(parsed.config.csiAddress, "/csi/csi.sock");
  strictEqual(parsed.config.capacityOwnerrefLevel, 0);
  // The intent journal lands beside the socket, in the plugin's host directory.
  strictEqual(
    checkJournalOnHostPath(rendered, {
      mounts: after.volumeMounts as { name: string; mountPath: string }[],
      journalPath: parsed.config.journalPath,
    }),
    "/var/lib/kubelet/plugins/csi-hostpath/csi-node-provisioner-journal.json",
  );
  const port = after.ports?.find((candidate) => candidate.name === "metrics");
  strictEqual(parsed.config.httpEndpoint, `:${port?.containerPort}`);
  checkProbes(after);
}

function bindsDaemonSetAccount(binding: K8sObject): void {
  deepStrictEqual(binding.subjects, [
    { kind: "ServiceAccount", name: "csi-provisioner", namespace: NAMESPACE },
  ]);
}

Deno.test("the kustomize component and the Helm recipe swap csi-driver-host-path's csi-provisioner container for this agent", async (t) => {
  const [binaries, helm, upstreamYaml] = await Promise.all([
    ensureClusterBinaries(),
    ensureHelm(),
    upstreamHostpathDaemonSet(),
  ]);
  const upstream = theObject(parseObjects(upstreamYaml), "DaemonSet");
  const viaKustomize = await renderComponent(binaries.kubectl, upstreamYaml);
  const viaHelm = await renderHelmRecipe(helm, upstreamYaml);

  await t.step("kustomize: args, env, mounts and socket kept; image, probes, uid 0 added", () => {
    checkSwappedDaemonSet(theObject(viaKustomize, "DaemonSet"), upstream);
    strictEqual(theObject(viaKustomize, "DaemonSet").metadata.namespace, NAMESPACE);
    bindsDaemonSetAccount(theObject(viaKustomize, "ClusterRoleBinding"));
  });

  await t.step("Helm: the same DaemonSet, and this chart's RBAC for its ServiceAccount", () => {
    const daemonSet = theObject(viaHelm, "DaemonSet");
    checkSwappedDaemonSet(daemonSet, upstream);
    deepStrictEqual(daemonSet.spec, theObject(viaKustomize, "DaemonSet").spec);
    deepStrictEqual(viaHelm.map((object) => object.kind).sort(), [
      "ClusterRole",
      "ClusterRoleBinding",
      "DaemonSet",
      "Role",
      "RoleBinding",
    ]);
    bindsDaemonSetAccount(theObject(viaHelm, "ClusterRoleBinding"));
    bindsDaemonSetAccount(theObject(viaHelm, "RoleBinding"));
  });

  await t.step("the API server accepts both renderings (server-side dry run)", async () => {
    await using cluster = await startValidationCluster(binaries);
    await cluster.admin.core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
    await dryRunAccepted(cluster, viaKustomize);
    await dryRunAccepted(cluster, viaHelm.map(inNamespace));
  });
});

/** helm template leaves metadata.namespace out of a template that does not set it. */
function inNamespace(object: K8sObject): K8sObject {
  return object.kind === "DaemonSet"
    ? { ...object, metadata: { ...object.metadata, namespace: NAMESPACE } }
    : object;
}

function grants(rules: PolicyRule[], group: string, resource: string, verb: string): boolean {
  return rules.some((rule) =>
    rule.apiGroups.includes(group) && rule.resources.includes(resource) && rule.verbs.includes(verb)
  );
}

function flatten(rules: PolicyRule[]): string[] {
  return rules.flatMap((rule) =>
    rule.apiGroups.flatMap((group) =>
      rule.resources.flatMap((resource) => rule.verbs.map((verb) => `${group}/${resource}:${verb}`))
    )
  );
}

Deno.test("upstream's rbac.yaml plus the component's ClusterRole grant exactly what deploy/rbac.yaml adds", async () => {
  const upstream = await loadUpstreamRbac();
  const upstreamRules = [
    ...(upstream.clusterRole.rules ?? []),
    ...(upstream.role.rules ?? []),
  ] as PolicyRule[];
  const ours = parseObjects(await Deno.readTextFile(RBAC_FILE))
    .filter((object) => object.kind === "ClusterRole" || object.kind === "Role")
    .flatMap(rulesOf);
  const component = rulesOf(
    theObject(
      parseObjects(await Deno.readTextFile(join(COMPONENT_DIR, "rbac.yaml"))),
      "ClusterRole",
    ),
  );
  const missing = flatten(ours).filter((grant) => {
    const [resource, verb] = grant.split(":") as [string, string];
    const [group, name] = resource.split("/") as [string, string];
    return !grants(upstreamRules, group, name, verb);
  });
  // The component adds what upstream lacks, and nothing upstream has.
  deepStrictEqual(flatten(component).sort(), missing.sort());
});
