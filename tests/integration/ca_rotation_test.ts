/**
 * A cluster CA rotation, followed by a running agent without a restart. The
 * agent's kubeconfig names its CA by file (certificate-authority), as the
 * in-cluster ServiceAccount's ca.crt does. The rotation goes the usual way:
 * the file gets a bundle of the old and the new CA, kube-apiserver is
 * restarted with a serving certificate of the new CA, then the file keeps
 * the new CA only. The agent (the same process throughout) provisions a
 * claim created after the rotation. The admin's clients get the new CA;
 * kube-controller-manager keeps the old one, so the claim's PV is what is
 * waited for, not Bound.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startCluster } from "../cluster/cluster.ts";
import { clientsFromKubeconfig } from "../cluster/kubeconfig.ts";
import { createRotatedServingCert } from "../cluster/pki.ts";
import { CA_CHECK_INTERVAL_MS } from "../../lib/kube/rest/ca_file.ts";
import { delay, waitFor } from "../cluster/wait.ts";
import { createNamespace } from "../cluster/workloads.ts";
import { selectedClaim, startOurAgents, waitForReady } from "./support.ts";

const NAMESPACE = "ca-rotation";

/** Rewrites a kubeconfig (JSON) so that its cluster's CA comes from `caFile`. */
async function useCaFile(kubeconfig: string, caFile: string): Promise<void> {
  const config = JSON.parse(await Deno.readTextFile(kubeconfig));
  for (const { cluster } of config.clusters) {
    delete cluster["certificate-authority-data"];
    cluster["certificate-authority"] = caFile;
  }
  await Deno.writeTextFile(kubeconfig, JSON.stringify(config, null, 2));
}

/** A copy of the admin's kubeconfig that trusts `caPem`. */
async function adminTrusting(cluster: { kubeconfigPath: string; dir: string }, caPem: string) {
  const config = JSON.parse(await Deno.readTextFile(cluster.kubeconfigPath));
  for (const { cluster: entry } of config.clusters) {
    entry["certificate-authority-data"] = btoa(caPem);
  }
  const path = join(cluster.dir, "admin-rotated.kubeconfig");
  await Deno.writeTextFile(path, JSON.stringify(config, null, 2), { mode: 0o600 });
  return clientsFromKubeconfig(path);
}

Deno.test("a cluster CA rotation is followed by the running agent: a claim made after it is provisioned", async () => {
  await using cluster = await startCluster({ nodes: ["node-a"] });
  try {
    const urls = await startOurAgents(cluster, { args: ["-v=2", "--retry-interval-max=2s"] });
    const url = urls.get("node-a")!;
    const agent = cluster.node("node-a").agent!;
    const caFile = join(cluster.dir, "agent-ca.crt");
    await Deno.writeTextFile(caFile, cluster.caPem);
    await useCaFile(agent.launch.kubeconfigPath, caFile);
    await agent.restart();
    await waitForReady(url);
    const process = agent.process;
    await createNamespace(cluster.admin, NAMESPACE);

    const rotated = await createRotatedServingCert(join(cluster.dir, "rotated-ca"));
    await Deno.writeTextFile(caFile, cluster.caPem + rotated.caPem);
    await cluster.apiserver.stop();
    const certDir = join(cluster.dir, "pki", "kube-apiserver");
    await Deno.writeTextFile(join(certDir, "apiserver.crt"), rotated.certPem);
    await Deno.writeTextFile(join(certDir, "apiserver.key"), rotated.keyPem, { mode: 0o600 });
    await cluster.apiserver.start();
    await waitForReady(url, 60_000);
    await Deno.writeTextFile(caFile, rotated.caPem);
    // The next comparison of the file is at most this far off while requests succeed.
    await delay(CA_CHECK_INTERVAL_MS + 1000);

    const admin = await adminTrusting(cluster, rotated.caPem);
    const claim = await admin.core.createNamespacedPersistentVolumeClaim({
      namespace: NAMESPACE,
      body: selectedClaim("after-rotation", {
        node: "node-a",
        storageClass: cluster.storageClassName("fast"),
        size: "10Mi",
        driverName: cluster.driverName,
      }),
    });
    const pv = await waitFor(async () => {
      const pvs = (await admin.core.listPersistentVolume()).items;
      return pvs.find((candidate) => candidate.spec?.claimRef?.uid === claim.metadata?.uid);
    }, { description: "the PV of the claim made after the rotation", timeoutMs: 60_000 });
    assert.equal(pv.spec?.csi?.driver, cluster.driverName);
    assert.equal(agent.process, process, "the agent was not started again");
    assert.equal(process.running, true, `the agent exited (log ${agent.logFile})`);
    const log = await Deno.readTextFile(agent.logFile);
    const changes = log.split("\n").filter((line) => line.includes("The cluster CA file changed"));
    assert.equal(changes.length, 2, "the bundle, then the new CA alone");
  } catch (error) {
    console.error(await cluster.tailLogs(40));
    throw error;
  }
});
