/**
 * The image, run: `deno task image`'s archive is unpacked with buildah and
 * its entrypoint runs in a chroot of that root file system as deploy/'s
 * DaemonSet pod would run on node-a (image_agent.ts): deploy/'s arguments,
 * environment and volumes (the node's socket directory, the memory /tmp),
 * the kubelet's ServiceAccount mount, /proc, /sys and /dev, a read-only
 * root, uid 0 with every capability dropped and no_new_privs. deploy/'s
 * objects (RBAC included) are applied to the cluster first. The agent must
 * become ready and provision a claim; a library the image lacks, a path the
 * binary expects, or a file it cannot write as that user fails here.
 *
 * The running agent's /metrics is also where the dashboard and the alerts
 * of deploy/monitoring/ are checked (tests/monitoring/monitoring_check.ts).
 *
 * The CSI driver is the cluster's default one, beside the image's agent on
 * the same socket path deploy/ mounts.
 */

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { hostPlatform } from "../../deploy/image/platforms.ts";
import { ensureClusterBinaries } from "../cluster/build.ts";
import { startCluster } from "../cluster/cluster.ts";
import { freeLoopbackPort } from "../cluster/ports.ts";
import { createNamespace } from "../cluster/workloads.ts";
import {
  applyObjects,
  daemonSetPodsByNode,
  deployedIdentity,
  waitAgentReady,
} from "../deploy/apply.ts";
import { capacityOf, CLASS, provisionOn, WORKLOADS } from "../deploy/lifecycle_steps.ts";
import { EXAMPLE_DIR, renderKustomize, theObject } from "../deploy/render.ts";
import { checkMonitoringMetrics } from "../monitoring/monitoring_check.ts";
import { mountImage, testImage } from "./image_fixture.ts";
import { processPrivileges, startImageAgent } from "./image_agent.ts";

const NODE = "node-a";

Deno.test("the image's entrypoint, run as deploy/'s DaemonSet runs it, becomes ready and provisions a claim", async (t) => {
  const build = await testImage();
  const binaries = await ensureClusterBinaries();
  const { objects } = await renderKustomize(binaries.kubectl, EXAMPLE_DIR);
  const identity = deployedIdentity(objects);
  await using image = await mountImage(build, hostPlatform());
  const cluster = await startCluster({
    binaries,
    nodes: [NODE],
    // The example overlay declares the CSIDriver and the classes.
    csiDriver: false,
    storageClasses: false,
    agentNamespace: identity.namespace,
  });
  try {
    await applyObjects(cluster, objects);
    await createNamespace(cluster.admin, WORKLOADS);
    const pods = await daemonSetPodsByNode(cluster, theObject(objects, "DaemonSet"));
    await using agent = await startImageAgent(cluster, {
      image,
      objects,
      pod: { nodeName: NODE, namespace: identity.namespace, podName: pods.get(NODE)! },
      httpPort: freeLoopbackPort(),
    });
    await waitAgentReady(agent.url, { agent: agent.process, timeoutMs: 60_000 });
    // The kernel's view: chrooted into the image, uid 0 without any capability.
    deepStrictEqual(await processPrivileges(agent.process.pid), {
      uid: "0",
      effective: "0000000000000000",
      bounding: "0000000000000000",
      noNewPrivs: "1",
      root: image.rootfs,
    });
    const capacity = await capacityOf(cluster, CLASS);
    ok(capacity.has(NODE), `capacity published for ${NODE}`);
    const pv = await provisionOn(cluster, "from-image", { node: NODE });
    ok(pv.startsWith("pvc-"), pv);
    await t.step("every metric the dashboard and the alerts name is in its /metrics", async () => {
      await checkMonitoringMetrics(`${agent.url}/metrics`);
    });
    strictEqual((await agent.process.stop()).code, 0, "a SIGTERM stops it cleanly");
    deepStrictEqual(await agent.terminationMessage(), "");
  } catch (error) {
    console.error(await cluster.tailLogs(40));
    throw error;
  } finally {
    await cluster.stop();
  }
});
