/**
 * deploy/components/replace-csi-provisioner over real drivers' node
 * DaemonSets (driver_daemonsets.ts): through a kustomize overlay, and through
 * `helm template --post-renderer` with the component's post-render.sh for
 * the drivers installed by their own chart. Each swapped DaemonSet keeps the
 * container's args, env and mounts and every other container, has one
 * httpGet handler per probe on the port the agent listens on, and is
 * accepted by a real API server (server-side apply).
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { ensureClusterBinaries } from "../cluster/build.ts";
import { ensureHelm } from "../cluster/helm_build.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { applyObjects, startValidationCluster } from "./apply.ts";
import {
  DRIVERS,
  type DriverSource,
  IMAGE,
  renderDriver,
  renderWithComponent,
  renderWithPostRenderer,
  unpackDriverDaemonsets,
} from "./driver_daemonsets.ts";
import { type K8sObject, parseObjects, run, theObject } from "./render.ts";
import { checkRestUntouched, checkSwappedContainer, podSpec } from "./swapped_container.ts";
import { MONITORING_DIR } from "../monitoring/monitoring_files.ts";
import { scrapedContainers } from "../monitoring/scrape.ts";

interface Swap {
  driver: DriverSource;
  how: "kustomize overlay" | "helm --post-renderer";
  before: K8sObject;
  after: K8sObject[];
}

/** The component's changes to one driver, and its ClusterRoleBinding for the DaemonSet's account. */
function checkSwap(swap: Swap): void {
  const after = theObject(swap.after, "DaemonSet");
  const options = { container: swap.driver.container };
  checkSwappedContainer(swap.before, after, { ...options, image: `${IMAGE}:0.1.0` });
  checkRestUntouched(swap.before, after, options);
  const account = podSpec(after).serviceAccountName;
  const binding = theObject(
    swap.after,
    "ClusterRoleBinding",
    `csi-node-provisioner-extra.${swap.driver.namespace}.${account}`,
  );
  deepStrictEqual(binding.subjects, [{
    kind: "ServiceAccount",
    name: account,
    namespace: swap.driver.namespace,
  }]);
}

/** What the component rendered (the DaemonSet and its RBAC), applied for real. */
async function applyAccepted(cluster: RunningCluster, swap: Swap): Promise<void> {
  const objects = swap.after.filter((object) =>
    object.kind === "DaemonSet" || object.metadata.name.startsWith("csi-node-provisioner-extra")
  );
  await applyObjects(cluster, objects);
  const daemonSet = theObject(objects, "DaemonSet");
  const stored = await cluster.admin.apps.readNamespacedDaemonSet({
    name: daemonSet.metadata.name,
    namespace: swap.driver.namespace,
  });
  const agent = stored.spec?.template.spec?.containers.find((candidate) =>
    candidate.name === swap.driver.container
  );
  strictEqual(agent?.livenessProbe?.httpGet?.path, "/healthz");
  strictEqual(agent?.livenessProbe?.tcpSocket, undefined);
}

Deno.test("the component swaps csi-provisioner in scylladb's, Azure's and democratic-csi's node DaemonSets", async (t) => {
  const [binaries, helm] = await Promise.all([ensureClusterBinaries(), ensureHelm()]);
  await using archive = await unpackDriverDaemonsets();
  const tools = { dir: archive.dir, helm, kubectl: binaries.kubectl };
  const swaps: Swap[] = [];
  for (const driver of DRIVERS) {
    const driverYaml = await renderDriver(driver, tools);
    const before = theObject(parseObjects(driverYaml), "DaemonSet");
    // democratic-csi's pod template sets only the deprecated serviceAccount,
    // which the component cannot read: it goes through the post-renderer.
    if (driver.manifest || driver.container === "csi-provisioner") {
      const after = parseObjects(await renderWithComponent(binaries.kubectl, driverYaml));
      swaps.push({ driver, how: "kustomize overlay", before, after });
    }
    if (driver.chart) {
      const after = parseObjects(await renderWithPostRenderer(driver, tools));
      swaps.push({ driver, how: "helm --post-renderer", before, after });
    }
  }
  deepStrictEqual(swaps.map((swap) => `${swap.driver.name} ${swap.how}`), [
    "scylladb local-csi-driver kustomize overlay",
    "Azure local-csi-driver kustomize overlay",
    "Azure local-csi-driver helm --post-renderer",
    "democratic-csi helm --post-renderer",
  ]);

  for (const swap of swaps) {
    await t.step(`${swap.driver.name}, ${swap.how}: container swapped, the rest untouched`, () => {
      checkSwap(swap);
    });
  }

  await t.step(
    "deploy/monitoring's PodMonitor scrapes the swapped container and nothing else",
    async () => {
      const monitoring = parseObjects(await run(binaries.kubectl, ["kustomize", MONITORING_DIR]));
      const podMonitor = theObject(monitoring, "PodMonitor");
      for (const swap of swaps) {
        const name = `${swap.driver.name} ${swap.how}`;
        deepStrictEqual(scrapedContainers(podMonitor, swap.before), [], name);
        deepStrictEqual(
          scrapedContainers(podMonitor, theObject(swap.after, "DaemonSet")),
          [swap.driver.container],
          name,
        );
      }
    },
  );

  await t.step(
    "the API server accepts every swapped DaemonSet (server-side apply); each account keeps its binding",
    async () => {
      await using cluster = await startValidationCluster(binaries);
      for (const namespace of new Set(DRIVERS.map((driver) => driver.namespace))) {
        if (namespace === "kube-system") continue;
        await cluster.admin.core.createNamespace({ body: { metadata: { name: namespace } } });
      }
      for (const swap of swaps) await applyAccepted(cluster, swap);
      // Applied one after the other, no driver's binding replaced another's.
      const bindings = await cluster.admin.rbac.listClusterRoleBinding({
        labelSelector: "csi-node-provisioner.io/binding=extra",
      });
      const bound = bindings.items.map((binding) => {
        const [subject] = binding.subjects ?? [];
        return `${subject?.namespace}/${subject?.name} -> ${binding.roleRef.name}`;
      }).sort();
      const accounts = swaps.map((swap) =>
        `${swap.driver.namespace}/${podSpec(theObject(swap.after, "DaemonSet")).serviceAccountName}`
      );
      deepStrictEqual(
        bound,
        [...new Set(accounts)].sort().map((account) => `${account} -> csi-node-provisioner-extra`),
      );
    },
  );
});
