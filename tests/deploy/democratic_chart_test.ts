/**
 * democratic-csi's Helm chart as its users install it (driver_daemonsets.ts:
 * the local-hostpath example, `controller.strategy=node`), csi-provisioner
 * swapped for this agent by the component's post-renderer, applied to a
 * one-node tests/cluster running democratic-csi's local-hostpath driver. The
 * agent is the compiled binary, run beside that driver with the rendered
 * container's args and env, as the kubelet would start the container in the
 * DaemonSet's pod on node-a. Two things differ on a test machine, and only
 * they are replaced:
 *
 * - the CSI socket: the pod's `--csi-address=/csi-data/csi.sock` (its
 *   socket-dir volume, where the chart's csi-grpc-proxy listens) becomes
 *   node-a's driver socket;
 * - the credentials: the pod has none in its args (in-cluster: the mounted
 *   ServiceAccount token under /var/run/secrets, which no test process has),
 *   so KUBECONFIG names a kubeconfig with a token of the same ServiceAccount.
 *
 * The env's downward-API fields are resolved for the DaemonSet's pod on
 * node-a (which the DaemonSet controller creates and no kubelet runs), and
 * the image's own environment comes first, as in the container. The HTTP
 * endpoint stays the rendered `:9811`.
 *
 * What a user then sees: the capacity object the args ask for
 * (--enable-capacity, --capacity-ownerref-level=1: owned by the DaemonSet),
 * a claim of the chart's StorageClass (its secret parameters) consumed by a
 * pod, placed on node-a by the scheduler and provisioned there, and deleted.
 */
import type { V1PersistentVolume } from "@kubernetes/client-node";
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { IMAGE_ENV } from "../../deploy/image/image.ts";
import { oursBinary } from "../cluster/agents.ts";
import { ensureClusterBinaries } from "../cluster/build.ts";
import { startCluster } from "../cluster/cluster.ts";
import { ensureHelm } from "../cluster/helm_build.ts";
import { spawnLogged } from "../cluster/process.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { step } from "../cluster/steps.ts";
import { waitFor } from "../cluster/wait.ts";
import {
  affinityNodes,
  createClaimAndPod,
  createNamespace,
  forceDeletePod,
  waitForClaimBound,
} from "../cluster/workloads.ts";
import { bytesOf } from "../integration/capacity_support.ts";
import { agentEvents } from "../integration/support.ts";
import { applyObjects, daemonSetPodsByNode, waitAgentReady } from "./apply.ts";
import { DRIVERS, renderWithPostRenderer, unpackDriverDaemonsets } from "./driver_daemonsets.ts";
import { type EnvVar, resolveEnv, withCsiAddress } from "./pod_launch.ts";
import { type K8sObject, parseObjects, theObject } from "./render.ts";
import { container, podSpec } from "./swapped_container.ts";

const CHART = DRIVERS.find((driver) => driver.name === "democratic-csi")!;
const NODE = "node-a";
const WORKLOADS = "chart-workloads";
const MiB = 1024n * 1024n;
/**
 * How far the published capacity may be from the driver's answer a moment
 * later: it is the free space of a filesystem every process of the test
 * writes its logs to.
 */
const CAPACITY_SLACK = 256n * MiB;

async function renderedChart(kubectl: string, helm: string): Promise<K8sObject[]> {
  await using archive = await unpackDriverDaemonsets();
  return parseObjects(await renderWithPostRenderer(CHART, { dir: archive.dir, helm, kubectl }));
}

/** The port of the rendered `--http-endpoint=:PORT`, checked free on this machine. */
function httpPort(args: readonly string[]): number {
  const endpoint = args.find((arg) => arg.startsWith("--http-endpoint="));
  const port = Number(endpoint?.split(":").at(-1));
  ok(Number.isInteger(port) && port > 0, `a rendered --http-endpoint with a port: ${endpoint}`);
  try {
    Deno.listen({ hostname: "0.0.0.0", port }).close();
  } catch (error) {
    throw new Error(`port ${port} of the rendered ${endpoint} is taken here: ${error}`);
  }
  return port;
}

/** Starts the compiled agent with the container's args and env, localised as the header says. */
async function startChartAgent(cluster: RunningCluster, objects: K8sObject[]) {
  const daemonSet = theObject(objects, "DaemonSet");
  const rendered = container(daemonSet, CHART.container);
  const pods = await daemonSetPodsByNode(cluster, daemonSet);
  const kubeconfig = await cluster.identity({
    namespace: CHART.namespace,
    serviceAccount: String(podSpec(daemonSet).serviceAccountName),
  });
  const args = withCsiAddress(rendered.args ?? [], cluster.node(NODE).csiSocket);
  const port = httpPort(args);
  const env = {
    ...IMAGE_ENV,
    ...resolveEnv(rendered.env as EnvVar[], {
      nodeName: NODE,
      namespace: CHART.namespace,
      podName: pods.get(NODE)!,
    }),
    KUBECONFIG: kubeconfig,
  };
  const agent = spawnLogged({
    name: `agent (chart's container) ${NODE}`,
    command: oursBinary(),
    args,
    env,
    logFile: join(cluster.dir, "logs", `agent-chart-${NODE}.log`),
  });
  return { agent, args, rendered, url: `http://127.0.0.1:${port}`, podName: pods.get(NODE)! };
}

/** The driver's GetCapacity answer for the class's parameters, in bytes. */
async function driverCapacity(cluster: RunningCluster): Promise<bigint> {
  const answer = await cluster.node(NODE).callDriver("Controller", "GetCapacity", {}) as {
    available_capacity?: string | number;
  };
  return BigInt(answer.available_capacity ?? 0);
}

Deno.test("democratic-csi's chart, csi-provisioner swapped: the agent runs with its container's args and env beside the driver", async (t) => {
  const [binaries, helm] = await Promise.all([ensureClusterBinaries(), ensureHelm()]);
  const objects = await renderedChart(binaries.kubectl, helm);
  const storageClass = theObject(objects, "StorageClass");
  await using cluster = await startCluster({
    binaries,
    nodes: [NODE],
    driver: "democratic",
    // The chart brings its CSIDriver and StorageClass.
    csiDriver: false,
    storageClasses: false,
    agentNamespace: CHART.namespace,
  });
  strictEqual(theObject(objects, "CSIDriver").metadata.name, cluster.driverName);
  await applyObjects(cluster, objects);
  await createNamespace(cluster.admin, WORKLOADS);
  const started = await startChartAgent(cluster, objects);
  try {
    await waitAgentReady(started.url, { agent: started.agent });

    await step(t, cluster, "the args are the rendered ones but the CSI socket", () => {
      const local = started.args.map((arg) =>
        arg.startsWith("--csi-address=") ? "--csi-address=/csi-data/csi.sock" : arg
      );
      deepStrictEqual(local, started.rendered.args);
      ok(started.args.includes("--capacity-ownerref-level=1"));
      return Promise.resolve();
    });

    await step(t, cluster, "capacity: one object for node-a, owned by the DaemonSet", async () => {
      const objectsOfClass = await waitFor(async () => {
        const list = await cluster.admin.storage.listNamespacedCSIStorageCapacity({
          namespace: CHART.namespace,
        });
        const found = list.items.filter((item) =>
          item.storageClassName === storageClass.metadata.name
        );
        return found.length > 0 && found;
      }, { description: `a CSIStorageCapacity for ${storageClass.metadata.name}` });
      strictEqual(objectsOfClass.length, 1);
      const published = objectsOfClass[0]!;
      deepStrictEqual(published.nodeTopology?.matchLabels, { [cluster.topologyKey]: NODE });
      const owners = published.metadata?.ownerReferences ?? [];
      deepStrictEqual(
        owners.map((owner) => [owner.kind, owner.name, owner.controller]),
        [["DaemonSet", theObject(objects, "DaemonSet").metadata.name, true]],
      );
      const answer = await driverCapacity(cluster);
      const difference = bytesOf(published.capacity) - answer;
      ok(answer > 0n, `the driver's free space: ${answer}`);
      ok(
        difference <= CAPACITY_SLACK && -difference <= CAPACITY_SLACK,
        `published ${published.capacity}, the driver answers ${answer} bytes`,
      );
    });

    let pvName = "";
    await step(
      t,
      cluster,
      "a claim of the chart's class, consumed by a pod: provisioned on node-a",
      async () => {
        await createClaimAndPod(cluster.admin, WORKLOADS, {
          name: "data",
          storageClass: storageClass.metadata.name,
          size: "64Mi",
        });
        const claim = await waitForClaimBound(cluster.admin, {
          namespace: WORKLOADS,
          name: "data",
        });
        pvName = claim.spec!.volumeName!;
        // Plain objects: client-node's classes are told apart by deepStrictEqual.
        const pv = JSON.parse(
          JSON.stringify(await cluster.admin.core.readPersistentVolume({ name: pvName })),
        ) as V1PersistentVolume;
        deepStrictEqual(affinityNodes(pv, cluster.topologyKey), [NODE]);
        strictEqual(pv.spec?.csi?.driver, cluster.driverName);
        // democratic-csi's volume IDs are the volume names.
        strictEqual(pv.spec?.csi?.volumeHandle, pvName);
        // It answers capacity_bytes 0: the PV has the requested size, as upstream writes it.
        strictEqual(String(pv.spec?.capacity?.storage), "64Mi");
        const parameters = storageClass.parameters as Record<string, string>;
        const secret = (purpose: string) => ({
          name: parameters[`csi.storage.k8s.io/${purpose}-secret-name`],
          namespace: parameters[`csi.storage.k8s.io/${purpose}-secret-namespace`],
        });
        deepStrictEqual(
          [pv.spec?.csi?.nodeStageSecretRef, pv.spec?.csi?.nodePublishSecretRef],
          [secret("node-stage"), secret("node-publish")],
        );
        deepStrictEqual(pv.spec?.csi?.controllerExpandSecretRef, secret("controller-expand"));
        const volumes = await cluster.node(NODE).volumes();
        deepStrictEqual(volumes.map((volume) => volume.name), [pvName]);
        // The scheduler binds the pod once its claim is bound.
        await waitFor(async () => {
          const pod = await cluster.admin.core.readNamespacedPod({
            namespace: WORKLOADS,
            name: "data",
          });
          return pod.spec?.nodeName === NODE;
        }, { description: `pod ${WORKLOADS}/data bound to ${NODE}` });
        // Events are written asynchronously.
        await waitFor(async () => {
          const events = await agentEvents(cluster, { namespace: WORKLOADS, name: "data" });
          return events.some((event) => event.reason === "ProvisioningSucceeded");
        }, { description: "the agent's ProvisioningSucceeded Event on the claim" });
      },
    );

    await step(t, cluster, "the claim deleted: its PV and directory gone", async () => {
      await forceDeletePod(cluster.admin, WORKLOADS, "data");
      await cluster.admin.core.deleteNamespacedPersistentVolumeClaim({
        namespace: WORKLOADS,
        name: "data",
      });
      await waitFor(async () => {
        const pvs = (await cluster.admin.core.listPersistentVolume()).items;
        return !pvs.some((pv) => pv.metadata?.name === pvName);
      }, { description: `PV ${pvName} deleted` });
      deepStrictEqual(await cluster.node(NODE).volumes(), []);
    });
  } finally {
    await started.agent.stop();
  }
});
