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
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureClusterBinaries } from "../cluster/build.ts";
import { ensureHelm } from "../cluster/helm_build.ts";
import { loadUpstreamRbac } from "../cluster/rbac.ts";
import { dryRunAccepted, startValidationCluster } from "./apply.ts";
import { checkJournalOnHostPath, parseAgentArgs } from "./daemonset_checks.ts";
import { COMPONENT_DIR, componentPort, IMAGE, renderWithComponent } from "./driver_daemonsets.ts";
import {
  checkRestUntouched,
  checkSwappedContainer,
  container,
  podSpec,
} from "./swapped_container.ts";
import {
  CHART_DIR,
  type K8sObject,
  parseObjects,
  type PolicyRule,
  RBAC_FILE,
  rulesOf,
  run,
  theObject,
} from "./render.ts";
import { upstreamHostpathDaemonSet } from "./upstream_hostpath.ts";

const NAMESPACE = "hostpath";
const CONTAINER = "csi-provisioner";

/** docs/deploying.md's Helm recipe, applied to upstream's manifest as a driver chart's template. */
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
          "capacity.ownerMode=pod",
          `image.repository=${IMAGE}`,
          `metrics.port=${componentPort()}`,
        ].flatMap((value) => ["--set", `csiNodeProvisioner.${value}`]),
      ]),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What the swap must leave as upstream had it, and what it must add. */
function checkSwappedDaemonSet(rendered: K8sObject, upstream: K8sObject): void {
  const config = checkSwappedContainer(upstream, rendered, {
    container: CONTAINER,
    image: `${IMAGE}:0.1.0`,
  });
  checkRestUntouched(upstream, rendered, { container: CONTAINER });
  strictEqual(podSpec(rendered).serviceAccountName, "csi-provisioner");
  strictEqual(config.csiAddress, "/csi/csi.sock");
  strictEqual(config.capacityOwnerrefLevel, 0);
  // The intent journal lands beside the socket, in the plugin's host directory.
  strictEqual(
    checkJournalOnHostPath(rendered, {
      mounts: container(rendered, CONTAINER).volumeMounts as { name: string; mountPath: string }[],
      journalPath: config.journalPath,
    }),
    "/var/lib/kubelet/plugins/csi-hostpath/csi-node-provisioner-journal.json",
  );
}

/** The DaemonSet's spec without the agent container's command and args. */
function withoutCommandLine(daemonSet: K8sObject): unknown {
  const copy = structuredClone(daemonSet);
  const agent = container(copy, CONTAINER);
  delete agent.command;
  delete agent.args;
  return copy.spec;
}

function agentConfig(daemonSet: K8sObject): unknown {
  const agent = container(daemonSet, CONTAINER);
  return parseAgentArgs([...(agent.command ?? []).slice(1), ...(agent.args ?? [])]);
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
  const viaKustomize = parseObjects(
    await renderWithComponent(binaries.kubectl, upstreamYaml, { namespace: NAMESPACE }),
  );
  const viaHelm = await renderHelmRecipe(helm, upstreamYaml);
  const viaKustomizeDaemonSet = theObject(viaKustomize, "DaemonSet");

  await t.step("kustomize: args, env, mounts and socket kept; image, probes, uid 0 added", () => {
    checkSwappedDaemonSet(theObject(viaKustomize, "DaemonSet"), upstream);
    strictEqual(theObject(viaKustomize, "DaemonSet").metadata.namespace, NAMESPACE);
    bindsDaemonSetAccount(theObject(viaKustomize, "ClusterRoleBinding"));
  });

  await t.step("Helm: the same DaemonSet, and this chart's RBAC for its ServiceAccount", () => {
    const daemonSet = theObject(viaHelm, "DaemonSet");
    checkSwappedDaemonSet(daemonSet, upstream);
    // The same but for where --http-endpoint is: the component's replaces or
    // extends the container's args, the Helm template's is in the command.
    deepStrictEqual(withoutCommandLine(daemonSet), withoutCommandLine(viaKustomizeDaemonSet));
    deepStrictEqual(agentConfig(daemonSet), agentConfig(viaKustomizeDaemonSet));
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
