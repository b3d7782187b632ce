import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import {
  agentPod,
  capacity,
  NODES,
  snapshot,
  unselected,
} from "../../../tests/builders/explain.ts";
import {
  sourceClaim,
  sourceVolume,
  storageClass,
  TOPOLOGY_KEY,
} from "../../../tests/builders/provision.ts";
import { explainSnapshot } from "../explain.ts";
import type { ExplainSnapshot } from "../snapshot.ts";

const immediate = storageClass({ volumeBindingMode: "Immediate" });

function explainImmediate(overrides: Partial<ExplainSnapshot> = {}) {
  const explanation = explainSnapshot(
    snapshot({ claim: unselected(), storageClass: immediate, ...overrides }),
  );
  const race = explanation.sections.find((s) => s.title === "Immediate binding race");
  return { verdict: explanation.verdict, race: race?.lines ?? [] };
}

Deno.test("an Immediate claim before the race ends: which nodes may take it and have room", () => {
  const { verdict, race } = explainImmediate();
  strictEqual(verdict, "Pending: Immediate binding: waiting for the race among node-b and node-a");
  deepStrictEqual(race, [
    "not decided yet: no node is selected",
    "the class has no allowedTopologies: every node may take it",
    "allowed and publishing enough: node-b (20Gi) and node-a (10Gi)",
  ]);
});

Deno.test("allowedTopologies leave out nodes, and the largest allowed node is named", () => {
  const allowed = storageClass({
    volumeBindingMode: "Immediate",
    allowedTopologies: [{
      matchLabelExpressions: [{ key: TOPOLOGY_KEY, values: ["node-c"] }],
    }],
  });
  const { verdict, race } = explainImmediate({ storageClass: allowed });
  strictEqual(
    verdict,
    "Pending: Immediate binding: no allowed node has 5Gi free in class fast; largest is node-c with 3Gi",
  );
  strictEqual(race[1], "allowed by the class's allowedTopologies: node-c");
});

Deno.test("the race's summary Warning, when an agent wrote one, is the verdict", () => {
  const message = "no node can take it: node-c has 3Gi";
  const { verdict, race } = explainImmediate({
    capacities: [capacity("node-c", "3Gi")],
    events: [{
      type: "Warning",
      reason: "NotEnoughCapacity",
      message,
      component: "hostpath.csi.k8s.io_node-c",
      time: "2026-11-23T11:58:00Z",
      count: 1,
      objectKind: "PersistentVolumeClaim",
      objectName: "data",
    }],
  });
  strictEqual(verdict, `Pending: Immediate binding: no node can take it: ${message}`);
  match(race.at(-1) ?? "", /^the race's last Warning \(hostpath.csi.k8s.io_node-c\): /);
});

Deno.test("agents with --node-deployment-immediate-binding=false never take it", () => {
  const args = [
    "--csi-address=/s",
    "--node-deployment",
    "--node-deployment-immediate-binding=false",
  ];
  const { verdict } = explainImmediate({ agentPods: NODES.map((n) => agentPod(n, { args })) });
  match(verdict, /--node-deployment-immediate-binding=false: none of them provisions it$/);
});

Deno.test("once selected-node is set, the race section names the winner", () => {
  const explanation = explainSnapshot(snapshot({ storageClass: immediate }));
  const race = explanation.sections.find((s) => s.title === "Immediate binding race");
  deepStrictEqual(race?.lines, ["over: node node-a won it"]);
  strictEqual(
    explanation.verdict,
    "Pending: node node-a was selected; its agent is provisioning it",
  );
});

Deno.test("without published capacity the race is still on: each agent asks its driver", () => {
  const { verdict, race } = explainImmediate({ capacities: [] });
  strictEqual(
    verdict,
    "Pending: Immediate binding: waiting for the race; no allowed node publishes capacity for " +
      "class fast, so each agent asks its driver",
  );
  strictEqual(race[2], "no allowed node publishes capacity for the class");
});

Deno.test("an Immediate clone: only the node that holds its source races, as the agents decide", () => {
  const clone = unselected();
  clone.spec.dataSource = { kind: "PersistentVolumeClaim", name: "origin" };
  const { verdict, race } = explainImmediate({
    claim: clone,
    source: {
      kind: "clone",
      claim: { ok: true, value: sourceClaim() },
      volume: { ok: true, value: sourceVolume({ node: "node-a" }) },
    },
  });
  strictEqual(verdict, "Pending: Immediate binding: waiting for the race among node-a");
  deepStrictEqual(race, [
    "not decided yet: no node is selected",
    "the class has no allowedTopologies: every node may take it",
    "holds the claim it clones, and so races: node-a",
    "allowed and publishing enough: node-a (10Gi)",
  ]);
});
