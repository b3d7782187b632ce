/**
 * `csi-node-provisioner explain` — the compiled binary — against the real
 * control plane, the real scheduler and the upstream hostpath driver, for
 * each case of docs/explain.md's "why is my claim Pending" list and a few more:
 * no class, a class of another provisioner, WaitForFirstConsumer without a
 * pod, no node with room, a selected node whose agent is not ready or
 * missing, an agent that refuses the claim, an Immediate claim nobody can
 * take, a bound claim; and the one-line failures (no such claim or
 * namespace, a kubeconfig it cannot use).
 *
 * Pools: node-a 2Gi, node-b 4Gi, node-c 10Gi; agents run on node-a and
 * node-b only (node-c's capacity is never published), each with an agent Pod
 * object that is Ready, as deploy/'s DaemonSet would have.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startCluster } from "../cluster/cluster.ts";
import { waitFor } from "../cluster/wait.ts";
import {
  claimObject,
  createClaimAndPod,
  createNamespace,
  waitForClaimBound,
} from "../cluster/workloads.ts";
import { CAPACITY_ARGS, startCapacityAgents } from "./capacity_support.ts";
import {
  createAgentPod,
  type ExplainRun,
  grantDocumentedExplainRole,
  runExplain,
  tokenKubeconfig,
  waitForCapacities,
} from "./explain_support.ts";
import { selectedClaim, step, waitForClaimEvent } from "./support.ts";

const NS = "explain";
const FAST = "csi-hostpath-fast";
const AGENT_ARGS = [
  "--capacity-ownerref-level=-1",
  "--capacity-poll-interval=2s",
  "--capacity-for-immediate-binding",
];
const AGENT_NODES = ["node-a", "node-b"];

function assertExplained(run: ExplainRun, verdict: string | RegExp): void {
  assert.equal(run.code, 0, `exit code; stderr: ${run.stderr}`);
  assert.equal(run.stderr, "");
  if (typeof verdict === "string") assert.equal(run.verdict, verdict, run.stdout);
  else assert.match(run.verdict, verdict, run.stdout);
}

function assertOneLine(run: ExplainRun, line: string): void {
  assert.equal(run.code, 1, run.stdout);
  assert.equal(run.stdout, "");
  assert.equal(run.stderr, `csi-node-provisioner explain: ${line}\n`);
}

Deno.test("explain: why a claim is where it is, from the compiled binary", async (t) => {
  await using cluster = await startCluster({
    nodes: ["node-a", "node-b", "node-c"],
    driverOptions: {
      capacity: (node) => ({
        fast: node === "node-a" ? "2Gi" : node === "node-b" ? "4Gi" : "10Gi",
      }),
    },
  });
  const { admin } = cluster;
  await startCapacityAgents(cluster, { nodes: AGENT_NODES, args: AGENT_ARGS });
  for (const node of AGENT_NODES) {
    await createAgentPod(cluster, { node, ready: true, args: [...CAPACITY_ARGS, ...AGENT_ARGS] });
  }
  await createNamespace(admin, NS);
  const explain = (name: string, extra: string[] = []) =>
    runExplain(["-n", NS, name, ...extra], { KUBECONFIG: cluster.kubeconfigPath });
  const createClaim = (name: string, storageClass: string, size = "1Gi") =>
    admin.core.createNamespacedPersistentVolumeClaim({
      namespace: NS,
      body: claimObject(name, { storageClass, size }),
    });
  const published = (className: string) => waitForCapacities(cluster, className, AGENT_NODES);
  await published(FAST);

  await step(t, cluster, "a class that does not exist, and a claim that names none", async () => {
    await createClaim("missing-class", "no-such-class");
    assertExplained(
      await explain("missing-class"),
      'Pending: StorageClass "no-such-class" does not exist',
    );
    await createClaim("classless", "");
    assertExplained(await explain("classless"), /^Pending: the claim names no StorageClass/);
  });

  await step(
    t,
    cluster,
    "a class of another provisioner names it and the agents' driver",
    async () => {
      await admin.storage.createStorageClass({
        body: {
          metadata: { name: "other" },
          provisioner: "example.com/other",
          volumeBindingMode: "WaitForFirstConsumer",
        },
      });
      await createClaim("foreign", "other");
      const run = await explain("foreign");
      assertExplained(
        run,
        'Pending: class other is provisioned by "example.com/other", not by the csi-node-provisioner agents (they serve hostpath.csi.k8s.io)',
      );
      assert.match(
        run.stdout,
        /\nStorageClass other:\n {2}provisioner example.com\/other, binding mode WaitForFirstConsumer\n/,
      );
    },
  );

  await step(t, cluster, "WaitForFirstConsumer without a pod is normal and said so", async () => {
    await createClaim("lonely", FAST);
    const run = await explain("lonely");
    assertExplained(
      run,
      "Pending: WaitForFirstConsumer: no pod uses it yet (normal until one is created)",
    );
    assert.match(run.stdout, /\nSelected node:\n {2}none yet\n/);
  });

  await step(
    t,
    cluster,
    "no node has room: largest first, and the scheduler's event on the pod",
    async () => {
      await createClaimAndPod(admin, NS, { name: "big", storageClass: FAST, size: "8Gi" });
      await waitFor(async () => {
        const events = await admin.core.listNamespacedEvent({
          namespace: NS,
          fieldSelector: "involvedObject.kind=Pod,involvedObject.name=big",
        });
        return events.items.some((event) => event.reason === "FailedScheduling");
      }, { description: "FailedScheduling on pod big", timeoutMs: 30_000 });
      const run = await explain("big");
      assertExplained(
        run,
        `Pending: no node has 8Gi free in class ${FAST}; largest is node-b with 4Gi`,
      );
      assert.match(
        run.stdout,
        new RegExp(
          `\\nPublished capacity for class ${FAST} \\(request 8Gi\\), largest first:\\n  node-b  4Gi, max volume 4Gi\\n  node-a  2Gi, max volume 2Gi\\n`,
        ),
      );
      assert.match(
        run.stdout,
        /\nEvents of pod explain\/big \(Pending, not scheduled\):\n.*Warning FailedScheduling \(default-scheduler\): 0\/3 nodes are available/,
      );
    },
  );

  await step(
    t,
    cluster,
    "a selected node whose agent is not ready, then has no agent pod",
    async () => {
      await admin.core.createNamespacedPersistentVolumeClaim({
        namespace: NS,
        body: selectedClaim("stranded", {
          node: "node-c",
          storageClass: FAST,
          driverName: cluster.driverName,
        }),
      });
      const pod = await createAgentPod(cluster, {
        node: "node-c",
        ready: false,
        args: CAPACITY_ARGS,
      });
      assertExplained(
        await explain("stranded"),
        `Pending: node node-c was selected, but agent pod ${cluster.agentNamespace}/${pod} is not ready ` +
          "(ContainersNotReady: containers with unready status: [csi-node-provisioner])",
      );
      await admin.core.deleteNamespacedPod({
        namespace: cluster.agentNamespace,
        name: pod,
        gracePeriodSeconds: 0,
      });
      await waitFor(async () => {
        const pods = await admin.core.listNamespacedPod({ namespace: cluster.agentNamespace });
        return !pods.items.some((candidate) => candidate.metadata?.name === pod);
      }, { description: "agent pod of node-c gone" });
      assertExplained(
        await explain("stranded"),
        "Pending: node node-c was selected, but no agent pod runs on node node-c",
      );
    },
  );

  await step(
    t,
    cluster,
    "the agent refuses the claim: its replayed decision and its Event agree",
    async () => {
      await admin.storage.createStorageClass({
        body: {
          metadata: { name: "bad-parameter" },
          provisioner: cluster.driverName,
          volumeBindingMode: "WaitForFirstConsumer",
          parameters: { kind: "fast", "csi.storage.k8s.io/bogus": "x" },
        },
      });
      await admin.core.createNamespacedPersistentVolumeClaim({
        namespace: NS,
        body: selectedClaim("refused", {
          node: "node-a",
          storageClass: "bad-parameter",
          driverName: cluster.driverName,
        }),
      });
      await waitForClaimEvent(cluster, { namespace: NS, name: "refused" }, {
        reason: "ProvisioningFailed",
      });
      const run = await explain("refused");
      assertExplained(
        run,
        /^Pending: node node-a's agent refuses it: .*found unknown parameter key "csi.storage.k8s.io\/bogus"/,
      );
      assert.match(
        run.stdout,
        /\nOwning agent:\n {2}the agent's decision for node node-a, replayed with the flags of pod csi-node-provisioner-node-a: refuses it: /,
      );
      assert.match(
        run.stdout,
        /\n {2}node-a, .*Warning ProvisioningFailed \(hostpath.csi.k8s.io_node-a\): .*csi.storage.k8s.io\/bogus/,
      );
    },
  );

  await step(t, cluster, "an Immediate claim no allowed node has room for", async () => {
    await admin.storage.createStorageClass({
      body: {
        metadata: { name: "instant" },
        provisioner: cluster.driverName,
        volumeBindingMode: "Immediate",
        parameters: { kind: "fast" },
      },
    });
    await published("instant");
    await createClaim("instant-big", "instant", "50Gi");
    const run = await explain("instant-big");
    // Before the race lands, or once it has and its summary Warning was written.
    assertExplained(
      run,
      /^Pending: Immediate binding: no (allowed node has 50Gi free in class instant; largest is node-b with 4Gi|node can take it: )/,
    );
    assert.match(
      run.stdout,
      /\nImmediate binding race:\n {2}not decided yet: no node is selected\n {2}the class has no allowedTopologies/,
    );
  });

  await step(
    t,
    cluster,
    "a volume made for the claim that the PV controller cannot bind",
    async () => {
      const claim = await createClaim("made-small", FAST);
      await admin.core.createPersistentVolume({
        body: {
          metadata: { name: "made-small-volume" },
          spec: {
            capacity: { storage: "1Mi" },
            accessModes: ["ReadWriteOnce"],
            storageClassName: FAST,
            persistentVolumeReclaimPolicy: "Retain",
            csi: { driver: cluster.driverName, volumeHandle: "made-small" },
            claimRef: { namespace: NS, name: "made-small", uid: claim.metadata?.uid ?? "" },
          },
        },
      });
      const run = await explain("made-small");
      assertExplained(
        run,
        "Pending: volume made-small-volume names the claim but holds 1Mi, less than the 1Gi requested: " +
          "the PV controller will not bind it",
      );
      assert.match(
        run.stdout,
        /\nVolume made-small-volume:\n {2}\S+, 1Mi capacity, driver hostpath.csi.k8s.io, handle made-small\n/,
      );
    },
  );

  await step(t, cluster, "a bound claim names its volume and the node it lives on", async () => {
    await createClaimAndPod(admin, NS, { name: "bound", storageClass: FAST, size: "1Gi" });
    const claim = await waitForClaimBound(admin, { namespace: NS, name: "bound" });
    const volume = claim.spec?.volumeName ?? "";
    const run = await explain("bound");
    assertExplained(run, new RegExp(`^Bound: bound to volume ${volume} on node node-[ab]$`));
    assert.match(
      run.stdout,
      new RegExp(`\\nVolume ${volume}:\\n  Bound, 1Gi capacity, driver hostpath.csi.k8s.io, `),
    );
    assert.match(
      run.stdout,
      /\n {2}node affinity: topology.hostpath.csi\/node In \[node-[ab]\] \(node node-[ab]\)\n/,
    );
  });

  await step(
    t,
    cluster,
    "docs/explain.md's ClusterRole is enough: the same explanation as the admin's",
    async () => {
      const identity = { namespace: NS, serviceAccount: "asks-why" };
      const kubeconfig = await cluster.identity(identity);
      await grantDocumentedExplainRole(cluster, identity);
      // Ages may tick between the runs; everything else is the same.
      const withoutAges = (text: string) => text.replace(/\d+[smhd] ago/g, "_ ago");
      for (const name of ["bound", "big", "refused"]) {
        // The agent keeps retrying "refused" (new Events): compare the user's run with the
        // admin's runs just before and after it, once nothing changed in between.
        for (let attempt = 1;; attempt++) {
          const before = withoutAges((await explain(name)).stdout);
          const asUser = await runExplain(["-n", NS, name], { KUBECONFIG: kubeconfig });
          const after = await explain(name);
          if (before !== withoutAges(after.stdout) && attempt < 5) continue;
          assertExplained(asUser, after.verdict);
          assert.equal(withoutAges(asUser.stdout), before);
          break;
        }
      }
    },
  );

  await step(t, cluster, "a missing claim or namespace: exit 1 and one line", async () => {
    assertOneLine(
      await explain("nope"),
      'PersistentVolumeClaim "nope" not found in namespace "explain"',
    );
    assertOneLine(
      await runExplain(["-n", "nowhere", "x"], { KUBECONFIG: cluster.kubeconfigPath }),
      'namespace "nowhere" not found',
    );
  });

  await step(
    t,
    cluster,
    "a kubeconfig it cannot use: exit 1, one line, never its content",
    async () => {
      const dir = await Deno.makeTempDir({ prefix: "explain-kubeconfig-" });
      try {
        const secret = "s3cr3t-token-never-printed";
        const broken = join(dir, "broken");
        await Deno.writeTextFile(
          broken,
          `apiVersion: v1\nusers:\n- name: u\n  user: {token: ${secret}\n  x: [\n`,
        );
        assertOneLine(
          await runExplain(["-n", NS, "bound", `--kubeconfig=${broken}`]),
          // lib/kube/rest/credentials.ts's own message: where the YAML breaks, never what it says.
          `kubeconfig ${broken}: is not valid YAML or JSON (deficient indentation at line 5, column 3)`,
        );
        const wrong = join(dir, "wrong-token");
        await Deno.writeTextFile(wrong, tokenKubeconfig(cluster, secret));
        const refused = await runExplain(["-n", NS, "bound"], { KUBECONFIG: wrong });
        assertOneLine(
          refused,
          `the API server at ${
            new URL(cluster.server).origin
          } refused the kubeconfig's credentials (401 Unauthorized)`,
        );
        assertOneLine(
          await runExplain(["x"], { KUBECONFIG: join(dir, "absent") }),
          `kubeconfig ${join(dir, "absent")}: cannot be read (ENOENT)`,
        );
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    },
  );
});
