/**
 * Immediate claims that fit on no node, on the real control plane with the
 * upstream hostpath driver: they stay Pending, and say why.
 *
 * - Ten nodes publishing capacity for the class (--enable-capacity
 *   --capacity-for-immediate-binding), fifty claims larger than any pool:
 *   fifty Warnings, each written once by the one agent chosen for its claim,
 *   not five hundred.
 * - Three nodes without --enable-capacity: each node reports its own
 *   decline (what GetCapacity says it has), once.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { startCluster } from "../cluster/cluster.ts";
import { delay, waitFor } from "../cluster/wait.ts";
import { createNamespace } from "../cluster/workloads.ts";
import { ANN_SELECTED_NODE } from "../../lib/model/keys.ts";
import { CAPACITY_ARGS } from "./capacity_support.ts";
import {
  capacityWarnings,
  claimsOf,
  createClaims,
  createImmediateClass,
  NOT_ENOUGH_CAPACITY,
  sumOverAgents,
  timesWritten,
} from "./immediate_support.ts";
import { claimEvents, startOurAgents, step } from "./support.ts";

const CLASS = "immediate-fast";
const NAMESPACE = "nowhere";
const RACE = ["--node-deployment-base-delay=200ms", "--node-deployment-max-delay=1s"];

Deno.test("Immediate claims that fit nowhere: ten nodes, fifty claims, fifty summaries", async (t) => {
  const nodes = Array.from({ length: 10 }, (_, index) => `node-${String(index).padStart(2, "0")}`);
  await using cluster = await startCluster({
    nodes,
    driverOptions: { capacity: (_node, index) => ({ fast: `${index + 1}Gi` }) },
  });
  await createImmediateClass(cluster, { name: CLASS, pool: "fast" });
  await createNamespace(cluster.admin, NAMESPACE);
  const agents = await startOurAgents(cluster, {
    args: [
      ...CAPACITY_ARGS,
      "--capacity-owner-node",
      "--capacity-for-immediate-binding",
      "--kube-api-qps=20",
      "--kube-api-burst=40",
      "-v=2",
      ...RACE,
    ],
  });
  await step(
    t,
    cluster,
    "one Warning per claim, written by one agent, naming the largest pool",
    async () => {
      const names = await createClaims(cluster, {
        namespace: NAMESPACE,
        prefix: "big",
        count: 50,
        storageClass: CLASS,
        size: "20Gi",
      });
      const all = async () => {
        const events =
          (await cluster.admin.core.listNamespacedEvent({ namespace: NAMESPACE })).items;
        return events.filter((event) => event.reason === NOT_ENOUGH_CAPACITY);
      };
      await waitFor(
        async () => new Set((await all()).map((e) => e.involvedObject.name)).size === 50,
        {
          description: "a Warning on each of the 50 claims",
          timeoutMs: 60_000,
          intervalMs: 500,
        },
      );
      await delay(5_000); // five more max delays: every node declined every claim again meanwhile
      const warnings = await all();
      strictEqual(timesWritten(warnings), 50, "50 summaries, not 500");
      for (const warning of warnings) {
        strictEqual(
          warning.message,
          "no node has 20Gi free in class immediate-fast: largest is node-09 with 10Gi " +
            "(10 nodes publish capacity)",
        );
      }
      const reporters = new Set(warnings.map((warning) => warning.source?.host));
      ok(reporters.size > 1, `the reports are spread over the agents: ${[...reporters]}`);
      const claims = await claimsOf(cluster, NAMESPACE);
      for (const name of names) {
        strictEqual(claims.get(name)?.status?.phase, "Pending");
        strictEqual(claims.get(name)?.metadata?.annotations?.[ANN_SELECTED_NODE], undefined);
      }
      const declines = await sumOverAgents(
        agents.values(),
        'csi_node_provisioner_immediate_binding_declines_total{reason="published-capacity"}',
      );
      ok(declines >= 500, `each node declined each claim on its own published figure: ${declines}`);
      const checks = await sumOverAgents(
        agents.values(),
        'csi_node_provisioner_immediate_binding_declines_total{reason="capacity"}',
      );
      strictEqual(checks, 0, "no GetCapacity was needed to decline");
    },
  );
});

Deno.test("Immediate claims that fit nowhere, without --enable-capacity: each node reports its own decline", async (t) => {
  const nodes = ["node-a", "node-b", "node-c"];
  await using cluster = await startCluster({
    nodes,
    driverOptions: { capacity: (_node, index) => ({ fast: `${index + 1}Gi` }) },
  });
  await createImmediateClass(cluster, { name: CLASS, pool: "fast" });
  await createNamespace(cluster.admin, NAMESPACE);
  await startOurAgents(cluster, {
    args: ["--feature-gates=Topology=true", "--strict-topology=true", "-v=2", ...RACE],
  });
  await step(t, cluster, "three Warnings, one per node, each written once", async () => {
    const [name] = await createClaims(cluster, {
      namespace: NAMESPACE,
      prefix: "big",
      count: 1,
      storageClass: CLASS,
      size: "5Gi",
    });
    const ref = { namespace: NAMESPACE, name: name! };
    await waitFor(async () => (await capacityWarnings(cluster, ref)).length === 3, {
      description: "a Warning from each node",
      timeoutMs: 30_000,
    });
    await delay(5_000);
    const warnings = await capacityWarnings(cluster, ref);
    strictEqual(timesWritten(warnings), 3);
    deepStrictEqual(
      warnings.map((warning) => [warning.source?.host, warning.message]).sort(),
      nodes.map((node, index) => [
        node,
        `node ${node} has ${
          index + 1
        }Gi free in class ${CLASS} (GetCapacity), the claim requests 5Gi`,
      ]),
    );
    const others = (await claimEvents(cluster, ref)).filter((event) =>
      event.reason === "ProvisioningFailed"
    );
    deepStrictEqual(others, [], "nothing was attempted");
  });
});
