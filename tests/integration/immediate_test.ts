/**
 * The Immediate binding ownership race on the real control plane: five
 * nodes of the upstream hostpath driver with pools of different sizes
 * (--capacity fast=40Gi … 120Gi), a recording proxy in front of each driver,
 * and this agent on every node with capacity published for Immediate
 * classes. kube-controller-manager's PV controller hands the claims to the
 * driver; no scheduler is involved.
 *
 * - A claim deleted while every node waits its delay: the races end, nothing
 *   is created.
 * - 200 claims at once: each ends Bound to exactly one PV, no volume name
 *   is ever asked of two drivers, and the conflicts are counted and printed.
 * - allowedTopologies: nodes outside them never ask their driver.
 * - Claims no node has room for: Pending, with one Warning each (from one
 *   agent) that names the largest free space, not repeated within the hour.
 *
 * The agents hold upstream's rbac.yaml alone, as in a driver's DaemonSet
 * whose sidecar was swapped: selected-node is written with an update, as
 * upstream writes it (deploy/'s RBAC, which allows the patch, is proven by
 * tests/e2e/rbac_test.ts).
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { startCluster } from "../cluster/cluster.ts";
import type { RunningCluster } from "../cluster/running_cluster.ts";
import { delay, waitFor } from "../cluster/wait.ts";
import { affinityNodes, createNamespace, waitForClaimBound } from "../cluster/workloads.ts";
import { ANN_SELECTED_NODE } from "../../lib/model/keys.ts";
import { NODE_DEPLOYMENT_ARGS } from "../cluster/agents.ts";
import { CAPACITY_ARGS } from "./capacity_support.ts";
import {
  attempts,
  capacityWarnings,
  claimsOf,
  createClaims,
  createImmediateClass,
  sumOverAgents,
  timesWritten,
  watchSelectedNode,
} from "./immediate_support.ts";
import { claimEvents, startOurAgents, step } from "./support.ts";

const NODES = ["node-a", "node-b", "node-c", "node-d", "node-e"];
const CLASS = "immediate-fast";
const NAMESPACE = "race";
const RACES = "csi_node_provisioner_immediate_binding_races";

/** The agents' flags: capacity for Immediate classes too, a short race, and room in the API budget. */
function agentArgs(delays: { base: string; max: string }): string[] {
  return [
    ...CAPACITY_ARGS,
    "--capacity-owner-node",
    "--capacity-for-immediate-binding",
    `--node-deployment-base-delay=${delays.base}`,
    `--node-deployment-max-delay=${delays.max}`,
    "--kube-api-qps=50",
    "--kube-api-burst=100",
    "-v=2",
  ];
}

/** Every CreateVolume the five drivers got, as volume name → the nodes asked (with their answers). */
async function createVolumeNodes(cluster: RunningCluster): Promise<Map<string, Set<string>>> {
  const nodes = new Map<string, Set<string>>();
  for (const node of NODES) {
    for (const call of await cluster.node(node).calls("CreateVolume")) {
      const name = (call.request as { name: string }).name;
      nodes.set(name, (nodes.get(name) ?? new Set()).add(`${node} ${call.codeName}`));
    }
  }
  return nodes;
}

/** The nodes a volume name was asked of, answers left out. */
function askedNodes(answers: Set<string>): Set<string> {
  return new Set([...answers].map((answer) => answer.split(" ")[0]!));
}

/** The race's GetCapacity calls on a node (the capacity publisher's carry no volume capabilities). */
async function raceChecks(cluster: RunningCluster, node: string): Promise<number> {
  const calls = await cluster.node(node).calls("GetCapacity");
  return calls.filter((call) =>
    ((call.request as { volume_capabilities?: unknown[] }).volume_capabilities ?? []).length > 0
  ).length;
}

/** The selected-node patches a node's agent sent, whatever their result. */
async function patchesOf(agents: Map<string, string>, node: string): Promise<number> {
  let sum = 0;
  for (const result of ["selected", "conflict", "gone", "error"]) {
    sum += await attempts([agents.get(node)!], result);
  }
  return sum;
}

Deno.test("Immediate binding: the race on five nodes of different sizes", async (t) => {
  await using cluster = await startCluster({
    nodes: NODES,
    driverOptions: {
      capacity: (_node, index) => ({ fast: `${40 + 20 * index}Gi` }),
      recordCalls: true,
    },
  });
  await createImmediateClass(cluster, { name: CLASS, pool: "fast" });
  await createNamespace(cluster.admin, NAMESPACE);

  const agents = await startOurAgents(cluster, {
    args: agentArgs({ base: "1s", max: "4s" }),
    rbac: "upstream",
  });

  await step(
    t,
    cluster,
    "a claim deleted mid-race: every race ends and nothing is created",
    async () => {
      // Frozen drivers hold every node's turn in its capacity check: nobody can win meanwhile.
      for (const node of NODES) cluster.node(node).freezeDriver();
      try {
        const [name] = await createClaims(cluster, {
          namespace: NAMESPACE,
          prefix: "deleted",
          count: 1,
          storageClass: CLASS,
          size: "1Gi",
        });
        await waitFor(async () => await sumOverAgents(agents.values(), RACES) === NODES.length, {
          description: "every agent racing for the claim",
        });
        await delay(2_000); // past every node's first delay: their turns wait on the driver
        await cluster.admin.core.deleteNamespacedPersistentVolumeClaim({
          namespace: NAMESPACE,
          name: name!,
        });
        await waitFor(async () => await sumOverAgents(agents.values(), RACES) === 0, {
          description: "every race over",
        });
      } finally {
        for (const node of NODES) cluster.node(node).thawDriver();
      }
      await delay(5_000); // longer than the max delay: any timer left would have fired
      strictEqual(await attempts(agents.values(), "selected"), 0);
      deepStrictEqual([...(await createVolumeNodes(cluster)).keys()], []);
      strictEqual((await cluster.admin.core.listPersistentVolume()).items.length, 0);
    },
  );

  await step(
    t,
    cluster,
    "200 claims at once: each Bound exactly once, no volume name on two nodes",
    async () => {
      const started = performance.now();
      const names = await createClaims(cluster, {
        namespace: NAMESPACE,
        prefix: "burst",
        count: 200,
        storageClass: CLASS,
        size: "1Gi",
      });
      const claims = await waitFor(async () => {
        const all = await claimsOf(cluster, NAMESPACE);
        const bound = names.filter((name) => all.get(name)?.status?.phase === "Bound");
        return bound.length === names.length ? all : undefined;
      }, { description: "all 200 claims Bound", timeoutMs: 180_000, intervalMs: 500 });
      const seconds = (performance.now() - started) / 1000;
      const pvs = (await cluster.admin.core.listPersistentVolume()).items;
      const perNode = new Map<string, number>();
      for (const name of names) {
        const claim = claims.get(name)!;
        const own = pvs.filter((pv) => pv.spec?.claimRef?.uid === claim.metadata!.uid);
        strictEqual(own.length, 1, `${name}: one PV`);
        strictEqual(own[0]!.metadata!.name, claim.spec!.volumeName, `${name}: bound to it`);
        const [node] = affinityNodes(own[0]!, cluster.topologyKey);
        strictEqual(
          claim.metadata!.annotations![ANN_SELECTED_NODE],
          node,
          `${name}: its owner's volume`,
        );
        perNode.set(node!, (perNode.get(node!) ?? 0) + 1);
      }
      const asked = await createVolumeNodes(cluster);
      strictEqual(asked.size, 200);
      const twice = [...asked].filter(([, answers]) => askedNodes(answers).size > 1)
        .map(([name, answers]) => `${name}: ${[...answers].join(", ")}`);
      deepStrictEqual(twice, [], "volume names asked of more than one node");
      const conflicts = await attempts(agents.values(), "conflict");
      strictEqual(await attempts(agents.values(), "selected"), 200);
      const split = NODES.map((node) => `${node} ${perNode.get(node) ?? 0}`).join(", ");
      console.log(
        `[immediate] 200 claims Bound in ${seconds.toFixed(1)} s; conflicts ${conflicts} ` +
          `(${
            (conflicts / 200).toFixed(3)
          } per volume); volumes per node (pools 40..120Gi): ${split}`,
      );
    },
  );

  await step(t, cluster, "allowedTopologies: nodes outside them never race", async () => {
    await createImmediateClass(cluster, {
      name: "only-a-b",
      pool: "fast",
      allowedNodes: ["node-a", "node-b"],
    });
    const outside = ["node-c", "node-d", "node-e"];
    const checksBefore = await Promise.all(outside.map((node) => raceChecks(cluster, node)));
    const patchesBefore = await Promise.all(outside.map((node) => patchesOf(agents, node)));
    const before = await createVolumeNodes(cluster);
    const names = await createClaims(cluster, {
      namespace: NAMESPACE,
      prefix: "ab",
      count: 10,
      storageClass: "only-a-b",
      size: "1Gi",
    });
    await waitFor(async () => {
      const all = await claimsOf(cluster, NAMESPACE);
      return names.every((name) => all.get(name)?.status?.phase === "Bound");
    }, { description: "the 10 claims Bound", timeoutMs: 60_000 });
    const added = [...await createVolumeNodes(cluster)].filter(([name]) => !before.has(name));
    strictEqual(added.length, 10);
    for (const [name, answers] of added) {
      ok(
        [...askedNodes(answers)].every((node) => node === "node-a" || node === "node-b"),
        `${name}: ${[...answers]}`,
      );
    }
    deepStrictEqual(
      await Promise.all(outside.map((node) => raceChecks(cluster, node))),
      checksBefore,
    );
    deepStrictEqual(
      await Promise.all(outside.map((node) => patchesOf(agents, node))),
      patchesBefore,
    );
  });

  await step(
    t,
    cluster,
    "claims that fit nowhere: Pending, one Warning each from one agent, not repeated",
    async () => {
      const names = await createClaims(cluster, {
        namespace: NAMESPACE,
        prefix: "huge",
        count: 3,
        storageClass: CLASS,
        size: "500Gi",
      });
      for (const name of names) {
        const [warning] = await waitFor(async () => {
          const events = await capacityWarnings(cluster, { namespace: NAMESPACE, name });
          return events.length > 0 ? events : undefined;
        }, { description: `${name}: NotEnoughCapacity`, timeoutMs: 60_000 });
        ok(
          /^no node has 500Gi free in class immediate-fast: largest is node-e with \d+(Gi|Mi|Ki)? \(5 nodes publish capacity\)$/
            .test(warning!.message ?? ""),
          String(warning!.message),
        );
        strictEqual(warning!.type, "Warning");
      }
      // Several more turns of every node (max delay 4 s): still one Warning, written once, per claim.
      await delay(10_000);
      const claims = await claimsOf(cluster, NAMESPACE);
      for (const name of names) {
        const events = await capacityWarnings(cluster, { namespace: NAMESPACE, name });
        strictEqual(
          timesWritten(events),
          1,
          `${name}: ${JSON.stringify(events.map((e) => e.message))}`,
        );
        strictEqual(claims.get(name)?.status?.phase, "Pending");
        strictEqual(claims.get(name)?.metadata?.annotations?.[ANN_SELECTED_NODE], undefined);
      }
      const declines = await sumOverAgents(
        agents.values(),
        'csi_node_provisioner_immediate_binding_declines_total{reason="published-capacity"}',
      );
      ok(
        declines >= 3 * NODES.length,
        `every node declined every claim on its published figure: ${declines}`,
      );
    },
  );
});

Deno.test("Immediate binding: an owner whose driver answers ResourceExhausted releases the claim for a new race", async (t) => {
  // The test driver: ResourceExhausted after a capacity check that passed needs a driver whose
  // CreateVolume disagrees with its GetCapacity, i.e. fault injection.
  await using cluster = await startCluster({
    nodes: ["node-a", "node-b"],
    driver: "test",
    storageCapacity: false,
    driverOptions: { capacity: { fast: "10Gi" } },
  });
  await createImmediateClass(cluster, { name: CLASS, pool: "fast" });
  await createNamespace(cluster.admin, NAMESPACE);
  for (const node of ["node-a", "node-b"]) {
    await cluster.node(node).control.setFault({
      method: "CreateVolume",
      code: "RESOURCE_EXHAUSTED",
      message: "pool fast is full",
      times: 1,
    });
  }
  await startOurAgents(cluster, {
    rbac: "upstream",
    args: [
      ...NODE_DEPLOYMENT_ARGS.filter((arg) => !arg.startsWith("--enable-capacity")),
      "--node-deployment-base-delay=500ms",
      "--node-deployment-max-delay=2s",
      "--retry-interval-start=200ms",
      "--retry-interval-max=2s",
    ],
  });
  await step(
    t,
    cluster,
    "released after ResourceExhausted, raced for again, Bound once",
    async () => {
      const ref = { namespace: NAMESPACE, name: "exhausted-000" };
      const watch = await watchSelectedNode(cluster, ref);
      let bound;
      try {
        await createClaims(cluster, {
          namespace: NAMESPACE,
          prefix: "exhausted",
          count: 1,
          storageClass: CLASS,
          size: "1Gi",
        });
        bound = await waitForClaimBound(cluster.admin, ref);
      } finally {
        watch.stop();
      }
      // Selected, released (the annotation removed), selected again: at least one new race.
      const selections = watch.history.filter((node) => node !== "");
      ok(selections.length >= 2, `selected-node over time: ${JSON.stringify(watch.history)}`);
      ok(watch.history.indexOf("", 1) > 0, `released in between: ${JSON.stringify(watch.history)}`);
      const volume = `pvc-${bound.metadata!.uid}`;
      const answers = [];
      for (const node of ["node-a", "node-b"]) {
        for (const call of await cluster.node(node).calls("CreateVolume")) {
          if ((call.request as { name: string }).name === volume) {
            answers.push(
              `${node} ${call.codeName}`,
            );
          }
        }
      }
      const owner = bound.metadata!.annotations![ANN_SELECTED_NODE]!;
      deepStrictEqual(answers.filter((answer) => answer.endsWith(" OK")), [`${owner} OK`]);
      ok(answers.includes(`${selections[0]} RESOURCE_EXHAUSTED`), answers.join(", "));
      const failed = (await claimEvents(cluster, ref)).filter((event) =>
        event.reason === "ProvisioningFailed"
      );
      ok(failed.some((event) => event.message?.includes("ResourceExhausted")), "the Warning");
      const pvs = (await cluster.admin.core.listPersistentVolume()).items;
      strictEqual(pvs.filter((pv) => pv.spec?.claimRef?.uid === bound.metadata!.uid).length, 1);
      for (const node of ["node-a", "node-b"]) {
        const held = (await cluster.node(node).volumes()).filter((v) => v.name === volume);
        strictEqual(held.length, node === owner ? 1 : 0, `${node} holds the volume`);
      }
    },
  );
});
