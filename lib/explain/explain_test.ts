import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import {
  agentPod,
  capacity,
  consumer,
  NODES,
  snapshot,
  unnamed,
  unselected,
} from "../../tests/builders/explain.ts";
import { storageClass, TOPOLOGY_KEY } from "../../tests/builders/provision.ts";
import { explainSnapshot, renderExplanation } from "./explain.ts";
import type { EventInfo, ExplainSnapshot } from "./snapshot.ts";
import type { AgentLease } from "../model/lease.ts";

function verdict(overrides: Partial<ExplainSnapshot>): string {
  return explainSnapshot(snapshot(overrides)).verdict;
}

function event(overrides: Partial<EventInfo>): EventInfo {
  return {
    type: "Normal",
    reason: "Provisioning",
    message: 'External provisioner is provisioning volume for claim "apps/data"',
    component: "hostpath.csi.k8s.io_node-a",
    time: "2026-11-23T11:59:00Z",
    count: 1,
    objectKind: "PersistentVolumeClaim",
    objectName: "data",
    ...overrides,
  };
}

Deno.test("a claim whose class does not exist says so first", () => {
  strictEqual(verdict({ storageClass: undefined }), 'Pending: StorageClass "fast" does not exist');
});

Deno.test("a claim that names no class says only a pre-made volume can bind it", () => {
  match(
    verdict({ storageClass: undefined, className: "" }),
    /^Pending: the claim names no StorageClass/,
  );
});

Deno.test("a class of another provisioner names it and the drivers the agents serve", () => {
  strictEqual(
    verdict({ storageClass: storageClass({ provisioner: "example.com/other" }) }),
    'Pending: class fast is provisioned by "example.com/other", not by the csi-node-provisioner ' +
      "agents (they serve hostpath.csi.k8s.io)",
  );
});

Deno.test("WaitForFirstConsumer without a pod is normal and says so", () => {
  strictEqual(
    verdict({ claim: unselected() }),
    "Pending: WaitForFirstConsumer: no pod uses it yet (normal until one is created)",
  );
});

Deno.test("a pod waits and no node has room: the largest published capacity is named", () => {
  const capacities = [
    capacity("node-a", "1Gi"),
    capacity("node-c", "3Gi"),
    capacity("node-b", "2Gi"),
  ];
  strictEqual(
    verdict({ claim: unselected(), consumers: [consumer()], capacities }),
    "Pending: no node has 5Gi free in class fast; largest is node-c with 3Gi",
  );
});

Deno.test("room on one node, the pod unschedulable for another reason: the scheduler's message", () => {
  const consumers = [
    consumer({ unschedulable: "0/3 nodes are available: 3 node(s) had untolerated taint." }),
  ];
  strictEqual(
    verdict({ claim: unselected(), consumers }),
    "Pending: pod app cannot be scheduled: 0/3 nodes are available: 3 node(s) had untolerated taint.",
  );
});

Deno.test("the capacity section lists every node largest first and marks the ones that fit", () => {
  const explanation = explainSnapshot(snapshot({ claim: unselected(), consumers: [consumer()] }));
  const section = explanation.sections.find((s) => s.title.startsWith("Published capacity"));
  deepStrictEqual(section, {
    title: "Published capacity for class fast (request 5Gi), largest first",
    lines: ["node-b  20Gi  fits", "node-a  10Gi  fits", "node-c  3Gi"],
  });
});

Deno.test("a maximum volume size below the request does not fit, as the scheduler checks", () => {
  const capacities = [capacity("node-a", "10Gi", { maximumVolumeSize: "4Gi" })];
  strictEqual(
    verdict({ claim: unselected(), consumers: [consumer()], capacities }),
    "Pending: no node has 5Gi free in class fast; largest is node-a with 10Gi",
  );
});

Deno.test("a selected node without an agent pod, and with an agent that is not ready", () => {
  strictEqual(
    verdict({ agentPods: [agentPod("node-b")] }),
    "Pending: node node-a was selected, but no agent pod runs on node node-a",
  );
  strictEqual(
    verdict({ agentPods: [agentPod("node-a", { ready: false })] }),
    "Pending: node node-a was selected, but agent pod csi-node-provisioner/csi-node-provisioner-node-a " +
      "is not ready (ContainersNotReady: containers not ready)",
  );
});

Deno.test("the replayed decision refuses a claim with a selector, with the agent's own message", () => {
  const base = snapshot().claim;
  const claim = { ...base, spec: { ...base.spec, selector: { matchLabels: { a: "b" } } } };
  match(
    verdict({ claim }),
    /^Pending: node node-a's agent refuses it: .*claim Selector is not supported/,
  );
});

Deno.test("the agent's last Warning on the claim is the reason, and its decision is replayed", () => {
  const events = [
    event({}),
    event({
      type: "Warning",
      reason: "ProvisioningFailed",
      message:
        'failed to provision volume with StorageClass "fast": rpc error: code = ResourceExhausted',
      time: "2026-11-23T11:59:30Z",
    }),
  ];
  const explanation = explainSnapshot(snapshot({ events }));
  match(
    explanation.verdict,
    /^Pending: node node-a's agent failed to provision it: ProvisioningFailed: /,
  );
  const agent = explanation.sections.find((s) => s.title === "Owning agent");
  match(
    agent?.lines[0] ?? "",
    /replayed with the flags of pod csi-node-provisioner-node-a: would call CreateVolume for pvc-0f8b4c2e-1a2b-4c3d-8e9f-0a1b2c3d4e5f of 5Gi$/,
  );
  match(
    agent?.lines[2] ?? "",
    /^node-a, 30s ago {2}Warning ProvisioningFailed \(hostpath.csi.k8s.io_node-a\)/,
  );
});

Deno.test("a claim selected to a node before the PV controller names a provisioner is replayed as provisioned", () => {
  const agent = explainSnapshot(snapshot({ claim: unnamed() })).sections.find((s) =>
    s.title === "Owning agent"
  );
  match(agent?.lines[0] ?? "", /would call CreateVolume for pvc-0f8b4c2e/);
});

Deno.test("the agent's own flags count: --volume-name-prefix changes the replayed volume name", () => {
  const agentPods = NODES.map((name) =>
    agentPod(name, {
      args: ["--csi-address=/csi/csi.sock", "--node-deployment", "--volume-name-prefix=data"],
    })
  );
  const explanation = explainSnapshot(snapshot({ agentPods }));
  const agent = explanation.sections.find((s) => s.title === "Owning agent");
  match(agent?.lines[0] ?? "", /would call CreateVolume for data-0f8b4c2e/);
  strictEqual(
    explanation.verdict,
    "Pending: node node-a was selected; its agent is provisioning it",
  );
});

Deno.test("a bound claim names its volume and the node its affinity selects", () => {
  const base = snapshot().claim;
  const claim = {
    ...base,
    spec: { ...base.spec, volumeName: "pvc-1" },
    status: { phase: "Bound" },
  };
  const volume = {
    metadata: { name: "pvc-1" },
    spec: {
      capacity: { storage: "5Gi" },
      csi: { driver: "hostpath.csi.k8s.io", volumeHandle: "h-1" },
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [{
            matchExpressions: [{ key: TOPOLOGY_KEY, operator: "In", values: ["node-b"] }],
          }],
        },
      },
    },
    status: { phase: "Bound" },
  };
  const explanation = explainSnapshot(snapshot({ claim, volume }));
  strictEqual(explanation.verdict, "Bound: bound to volume pvc-1 on node node-b");
  const section = explanation.sections.find((s) => s.title === "Volume pvc-1");
  deepStrictEqual(section?.lines, [
    "Bound, 5Gi capacity, driver hostpath.csi.k8s.io, handle h-1",
    "node affinity: topology.hostpath.csi/node In [node-b] (node node-b)",
  ]);
});

Deno.test("the text is the verdict, then titled sections with the claim's and its pod's events", () => {
  const events = [
    event({
      objectKind: "Pod",
      objectName: "app",
      reason: "FailedScheduling",
      component: "default-scheduler",
      type: "Warning",
      message: "0/3 nodes are available",
    }),
    event({
      reason: "WaitForFirstConsumer",
      component: "persistentvolume-controller",
      message: "waiting for first consumer",
      count: 4,
    }),
  ];
  const text = renderExplanation(
    explainSnapshot(snapshot({ claim: unselected(), consumers: [consumer()], events })),
  );
  const lines = text.split("\n");
  strictEqual(lines[0], "Pending: waiting for the scheduler to place pod app");
  ok(
    text.includes(
      "\nEvents of claim apps/data:\n  60s ago x4  Normal WaitForFirstConsumer (persistentvolume-controller): waiting for first consumer\n",
    ),
    text,
  );
  ok(
    text.includes(
      "\nEvents of pod apps/app (Pending, not scheduled):\n  60s ago  Warning FailedScheduling (default-scheduler): 0/3 nodes are available\n",
    ),
    text,
  );
  ok(text.includes("\nSelected node:\n  none yet\n"), text);
  ok(text.endsWith("\n") && !text.endsWith("\n\n"), "one newline at the end");
});

Deno.test("a volume made for the claim and not bound: whether the PV controller can bind it", () => {
  const made = {
    metadata: { name: "pvc-made" },
    spec: {
      capacity: { storage: "5Gi" },
      storageClassName: "fast",
      claimRef: { uid: "0f8b4c2e-1a2b-4c3d-8e9f-0a1b2c3d4e5f" },
    },
    status: { phase: "Available" },
  };
  strictEqual(
    verdict({ madeFor: made }),
    "Pending: volume pvc-made was made for it (phase Available); waiting for the PV controller to bind it",
  );
  strictEqual(
    verdict({ madeFor: { ...made, spec: { ...made.spec, capacity: { storage: "1Gi" } } } }),
    "Pending: volume pvc-made names the claim but holds 1Gi, less than the 5Gi requested: " +
      "the PV controller will not bind it",
  );
  const explanation = explainSnapshot(snapshot({ madeFor: made }));
  ok(explanation.sections.some((s) => s.title === "Volume pvc-made"));
});

Deno.test("the agent's ProvisioningSucceeded without a bound claim waits for the PV controller", () => {
  const events = [
    event({ reason: "ProvisioningSucceeded", message: "Successfully provisioned volume pvc-1" }),
  ];
  strictEqual(
    verdict({ events }),
    "Pending: node node-a's agent provisioned it (Successfully provisioned volume pvc-1); " +
      "waiting for the PV controller to bind it",
  );
  strictEqual(
    verdict({ events: [event({})] }),
    "Pending: node node-a was selected; its agent is provisioning it (started 60s ago)",
  );
});

function lease(overrides: Partial<AgentLease> = {}): AgentLease {
  return {
    name: "csi-node-provisioner-12345678-node-a",
    resourceVersion: "1",
    node: "node-a",
    publisher: "external-provisioner-node-a",
    renewTime: "2026-11-23T11:50:00.000000Z",
    durationMs: 60_000,
    segment: { [TOPOLOGY_KEY]: "node-a" },
    ...overrides,
  };
}

function nodeLoss(overrides: Partial<ExplainSnapshot>): string[] {
  const sections = explainSnapshot(snapshot(overrides)).sections;
  return sections.find((section) => section.title === "Node loss")?.lines ?? [];
}

Deno.test("node loss: nothing to say while the node and its agent are there", () => {
  deepStrictEqual(nodeLoss({ leases: [lease({ renewTime: "2026-11-23T11:59:50.000000Z" })] }), []);
});

Deno.test("node loss: an expired Lease says since when, and when its capacity is withdrawn", () => {
  deepStrictEqual(nodeLoss({ leases: [lease()] }), [
    "its agent's Lease csi-node-provisioner-12345678-node-a expired at 2026-11-23T11:51:00.000Z (9m ago)",
    "its CSIStorageCapacity objects are withdrawn by another agent at 2026-11-23T11:56:00.000Z (--capacity-withdraw-after 300s after the Lease expired), and published again when the agent is back",
  ]);
});

Deno.test("node loss: a deleted Node, noted by the watchers: when the release comes, or that it is off", () => {
  const nodes = NODES.filter((name) => name !== "node-a").map((name) => ({ name, labels: {} }));
  const noted = { nodeGoneSinceMs: Date.parse("2026-11-23T11:55:00Z"), releaseAfter: "1800s" };
  const lines = nodeLoss({ nodes, leases: [lease(noted)] });
  deepStrictEqual(lines.slice(0, 1), ["Node node-a does not exist"]);
  deepStrictEqual(lines.slice(3), [
    "the agents that watch the Leases saw the Node deleted at 2026-11-23T11:55:00.000Z (5m ago)",
    'at 2026-11-23T12:25:00.000Z (--node-loss-release-after 1800s) a Released volume of that node is deleted; a Bound one is reported, and its claim is kept (its class has no csi-node-provisioner.io/delete-claims-of-lost-nodes: "true")',
  ]);
  const off = nodeLoss({ nodes, leases: [lease({ ...noted, releaseAfter: "0s" })] });
  match(off.at(-1)!, /not released \(--node-loss-release-after=0\)/);
  const unnoted = nodeLoss({ nodes, leases: [lease()] });
  match(unnoted.at(-1)!, /have not noted the Node's deletion yet/);
});

Deno.test("node loss: a volume missing on the driver at its agent's start is told", () => {
  const missing = event({
    type: "Warning",
    reason: "VolumeMissingOnDriver",
    message:
      "PersistentVolume pv-1 is Bound and CSI driver hostpath.csi.k8s.io no longer has its volume h-1",
  });
  const lines = nodeLoss({ events: [missing] });
  strictEqual(lines.length, 1);
  match(lines[0]!, /did not have the volume at its agent's start .*no longer has its volume h-1/);
});
