import { deepStrictEqual, strictEqual } from "node:assert/strict";
import type { NodeSelectorTerm, VolumeNodeAffinity } from "../model/objects.ts";
import {
  accessibilityOn,
  holdsThisNodesVolume,
  isConfinedToNode,
  volumeIsAccessible,
  volumeNodeAffinity,
} from "./affinity.ts";
import { TOPOLOGY_KEY as KEY } from "../../tests/builders/provision.ts";

function affinity(...terms: NodeSelectorTerm[]): VolumeNodeAffinity {
  return { required: { nodeSelectorTerms: terms } };
}

Deno.test("volumeNodeAffinity() makes one In term per topology, keys sorted", () => {
  deepStrictEqual(
    volumeNodeAffinity([
      { segments: { [KEY]: "node-a", "a.example/zone": "z1" } },
      { segments: {} },
      {
        segments: { [KEY]: "node-b" },
      },
    ]),
    affinity(
      {
        matchExpressions: [
          { key: "a.example/zone", operator: "In", values: ["z1"] },
          { key: KEY, operator: "In", values: ["node-a"] },
        ],
      },
      { matchExpressions: [{ key: KEY, operator: "In", values: ["node-b"] }] },
    ),
  );
});

Deno.test("volumeNodeAffinity() gives none without topology, and none for only empty segments", () => {
  deepStrictEqual(volumeNodeAffinity([]), undefined);
  deepStrictEqual(volumeNodeAffinity(null), undefined);
  deepStrictEqual(volumeNodeAffinity([{ segments: {} }]), undefined);
});

Deno.test("volumeIsAccessible() accepts a PV whose affinity was generated for our segment", () => {
  const segment = { [KEY]: "node-a" };
  deepStrictEqual(volumeIsAccessible(volumeNodeAffinity([{ segments: segment }]), segment), {
    kind: "accessible",
  });
});

Deno.test("volumeIsAccessible() rejects a PV of another node", () => {
  deepStrictEqual(
    volumeIsAccessible(volumeNodeAffinity([{ segments: { [KEY]: "node-b" } }]), {
      [KEY]: "node-a",
    }),
    { kind: "notAccessible" },
  );
});

Deno.test("volumeIsAccessible() does not claim PVs without node affinity (upstream: every node deletes them)", () => {
  const segment = { [KEY]: "node-a" };
  deepStrictEqual(volumeIsAccessible(undefined, segment), { kind: "noAffinity" });
  deepStrictEqual(volumeIsAccessible({}, segment), { kind: "noAffinity" });
  deepStrictEqual(volumeIsAccessible(affinity(), segment), { kind: "noAffinity" });
});

Deno.test("volumeIsAccessible() cannot decide without the node's topology", () => {
  deepStrictEqual(volumeIsAccessible(affinity(), null), { kind: "noNodeTopology" });
});

Deno.test("volumeIsAccessible() evaluates each operator as the Kubernetes matcher does", () => {
  const segment = { [KEY]: "node-a", "example.com/rack": "7" };
  const cases: [string, string, string[] | undefined, boolean][] = [
    [KEY, "In", ["node-b", "node-a"], true],
    [KEY, "In", ["node-b"], false],
    [KEY, "NotIn", ["node-b"], true],
    [KEY, "NotIn", ["node-a"], false],
    ["missing", "NotIn", ["x"], true],
    [KEY, "Exists", undefined, true],
    ["missing", "Exists", [], false],
    ["missing", "DoesNotExist", undefined, true],
    [KEY, "DoesNotExist", undefined, false],
    ["example.com/rack", "Gt", ["6"], true],
    ["example.com/rack", "Gt", ["7"], false],
    ["example.com/rack", "Lt", ["8"], true],
    ["example.com/rack", "Lt", ["7"], false],
    [KEY, "Gt", ["1"], false], // the label is not an integer
    ["missing", "Lt", ["1"], false],
  ];
  for (const [key, operator, values, accessible] of cases) {
    const requirement = values === undefined ? { key, operator } : { key, operator, values };
    deepStrictEqual(
      volumeIsAccessible(affinity({ matchExpressions: [requirement] }), segment),
      { kind: accessible ? "accessible" : "notAccessible" },
      `${key} ${operator} ${JSON.stringify(values)}`,
    );
  }
});

Deno.test("volumeIsAccessible() ORs terms and ANDs the expressions of a term", () => {
  const segment = { [KEY]: "node-a", zone: "z1" };
  const inNode = (node: string) => ({ key: KEY, operator: "In", values: [node] });
  const inZone = (zone: string) => ({ key: "zone", operator: "In", values: [zone] });
  deepStrictEqual(
    volumeIsAccessible(affinity({ matchExpressions: [inNode("node-a"), inZone("z2")] }), segment),
    { kind: "notAccessible" },
  );
  deepStrictEqual(
    volumeIsAccessible(
      affinity({ matchExpressions: [inNode("node-b")] }, {
        matchExpressions: [inNode("node-a"), inZone("z1")],
      }),
      segment,
    ),
    { kind: "accessible" },
  );
});

Deno.test("volumeIsAccessible() never matches matchFields or empty terms on a nameless segment", () => {
  const segment = { [KEY]: "node-a" };
  const byName = { key: "metadata.name", operator: "In", values: ["node-a"] };
  deepStrictEqual(volumeIsAccessible(affinity({ matchFields: [byName] }), segment), {
    kind: "notAccessible",
  });
  deepStrictEqual(
    volumeIsAccessible(
      affinity({
        matchExpressions: [{ key: KEY, operator: "In", values: ["node-a"] }],
        matchFields: [byName],
      }),
      segment,
    ),
    { kind: "notAccessible" },
  );
  deepStrictEqual(volumeIsAccessible(affinity({}), segment), { kind: "notAccessible" });
});

Deno.test("volumeIsAccessible() reports unparsable terms only when no term matched", () => {
  const segment = { [KEY]: "node-a" };
  const bad = { matchExpressions: [{ key: KEY, operator: "Near", values: ["node-a"] }] };
  const good = { matchExpressions: [{ key: KEY, operator: "In", values: ["node-a"] }] };
  deepStrictEqual(volumeIsAccessible(affinity(bad, good), segment), { kind: "accessible" });
  deepStrictEqual(volumeIsAccessible(affinity(bad), segment), {
    kind: "error",
    message:
      'checking volume affinity failed: nodeSelectorTerms[0].matchExpressions[0].operator: Unsupported value: "Near": supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"',
  });
});

Deno.test("volumeIsAccessible() reports invalid requirements as field errors", () => {
  const segment = { [KEY]: "node-a" };
  const cases: [NodeSelectorTerm, string][] = [
    [
      { matchExpressions: [{ key: KEY, operator: "In", values: [] }] },
      "nodeSelectorTerms[0].matchExpressions[0].values: Required value: for 'in', 'notin' operators, values set can't be empty",
    ],
    [
      { matchExpressions: [{ key: KEY, operator: "Exists", values: ["x"] }] },
      "nodeSelectorTerms[0].matchExpressions[0].values: Forbidden: values set must be empty for exists and does not exist",
    ],
    [
      { matchExpressions: [{ key: KEY, operator: "Gt", values: ["one"] }] },
      `nodeSelectorTerms[0].matchExpressions[0].values: Invalid value: ["one"]: for 'Gt', 'Lt' operators, exactly one integer value is required`,
    ],
    [
      { matchExpressions: [{ key: "example.com/rack", operator: "Gt", values: ["-1"] }] },
      'nodeSelectorTerms[0].matchExpressions[0].values: Invalid value: "-1": not a valid label value',
    ],
    [
      { matchExpressions: [{ key: "bad key", operator: "Exists" }] },
      'nodeSelectorTerms[0].matchExpressions[0].key: Invalid value: "bad key": not a valid label key',
    ],
    [
      { matchExpressions: [{ key: KEY, operator: "In", values: ["bad value"] }] },
      'nodeSelectorTerms[0].matchExpressions[0].values: Invalid value: "bad value": not a valid label value',
    ],
  ];
  for (const [term, error] of cases) {
    deepStrictEqual(volumeIsAccessible(affinity(term), segment), {
      kind: "error",
      message: `checking volume affinity failed: ${error}`,
    });
  }
  deepStrictEqual(
    volumeIsAccessible(affinity(cases[0]![0], cases[1]![0]), segment),
    {
      kind: "error",
      message: `checking volume affinity failed: [${cases[0]![1]}, ${
        cases[1]![1].replace("nodeSelectorTerms[0]", "nodeSelectorTerms[1]")
      }]`,
    },
  );
});

Deno.test("accessibilityOn() answers as volumeIsAccessible() for affinities of every shape", () => {
  const segment = { [KEY]: "node-a", "example.com/zone": "z1" };
  const own = { matchExpressions: [{ key: KEY, operator: "In", values: ["node-a"] }] };
  const zone = { matchExpressions: [{ key: "example.com/zone", operator: "In", values: ["z1"] }] };
  const other = { matchExpressions: [{ key: KEY, operator: "In", values: ["node-b"] }] };
  const bad = { matchExpressions: [{ key: KEY, operator: "Near", values: ["node-a"] }] };
  const withFields = { ...own, matchFields: [{ key: "metadata.name", operator: "In" }] };
  const both = { matchExpressions: [...own.matchExpressions, ...zone.matchExpressions] };
  const twoValues = { matchExpressions: [{ key: KEY, operator: "In", values: ["node-a", "x"] }] };
  const affinities = [
    undefined,
    { required: { nodeSelectorTerms: [] } },
    affinity(own),
    affinity(zone),
    affinity(both),
    affinity(other),
    affinity(bad),
    affinity(bad, own),
    affinity(other, own),
    affinity(withFields),
    affinity(twoValues),
    affinity({}),
  ];
  for (const candidate of [segment, { [KEY]: "node-b" }, null]) {
    const accessibility = accessibilityOn(candidate);
    for (const nodeAffinity of affinities) {
      deepStrictEqual(
        accessibility(nodeAffinity),
        volumeIsAccessible(nodeAffinity, candidate),
        JSON.stringify({ candidate, nodeAffinity }),
      );
    }
  }
});

Deno.test("accessibilityOn(): a segment label that is not a valid label is still an error", () => {
  const segment = { "bad key": "node-a", [KEY]: "bad value" };
  const accessibility = accessibilityOn(segment);
  const badKey = { matchExpressions: [{ key: "bad key", operator: "In", values: ["node-a"] }] };
  const badValue = { matchExpressions: [{ key: KEY, operator: "In", values: ["bad value"] }] };
  deepStrictEqual(accessibility(affinity(badKey)), {
    kind: "error",
    message:
      'checking volume affinity failed: nodeSelectorTerms[0].matchExpressions[0].key: Invalid value: "bad key": not a valid label key',
  });
  deepStrictEqual(accessibility(affinity(badValue)).kind, "error");
});

const nodeA = { name: "node-a", segment: { [KEY]: "node-a", "zone": "z1" } };

Deno.test("isConfinedToNode(): a volume whose every term names this node in its node key is", () => {
  const oneTerm = volumeNodeAffinity([{ segments: { [KEY]: "node-a", zone: "z1" } }]);
  strictEqual(isConfinedToNode(oneTerm, nodeA), true);
  const twoTerms = volumeNodeAffinity([
    { segments: { [KEY]: "node-a" } },
    { segments: { [KEY]: "node-a", zone: "z1" } },
  ]);
  strictEqual(isConfinedToNode(twoTerms, nodeA), true);
});

Deno.test("isConfinedToNode(): a volume other nodes may hold, or of no node, is not", () => {
  const zone = volumeNodeAffinity([{ segments: { zone: "z1" } }]);
  strictEqual(isConfinedToNode(zone, nodeA), false, "a zone's volume");
  const twoNodes = volumeNodeAffinity([
    { segments: { [KEY]: "node-a" } },
    { segments: { [KEY]: "node-b" } },
  ]);
  strictEqual(isConfinedToNode(twoNodes, nodeA), false, "a volume of two nodes");
  strictEqual(isConfinedToNode(undefined, nodeA), false, "no affinity");
  const elsewhere = volumeNodeAffinity([{ segments: { [KEY]: "node-b" } }]);
  strictEqual(isConfinedToNode(elsewhere, nodeA), false, "another node's volume");
  const notIn = {
    required: {
      nodeSelectorTerms: [{
        matchExpressions: [{ key: KEY, operator: "NotIn", values: ["node-a"] }],
      }],
    },
  };
  strictEqual(isConfinedToNode(notIn, nodeA), false, "an operator other than In");
});

Deno.test("isConfinedToNode(): the node's name counts only in a key whose value here is that name", () => {
  // A zone that happens to be called like the node is no node key.
  const named = { name: "node-a", segment: { zone: "z1", rack: "node-a-rack" } };
  const rack = volumeNodeAffinity([{ segments: { zone: "node-a" } }]);
  strictEqual(isConfinedToNode(rack, named), false);
  strictEqual(
    isConfinedToNode(volumeNodeAffinity([{ segments: { [KEY]: "node-a" } }]), {
      name: "node-a",
      segment: null,
    }),
    false,
    "no segment from the driver",
  );
});

Deno.test("holdsThisNodesVolume(): driver, handle and node affinity must all be this node's", () => {
  const here = { "topology.test/node": "node-a" };
  const pv = (node: string | undefined, handle = "pvc-1", driver = "test.csi") => ({
    metadata: { name: "pvc-1" },
    spec: {
      csi: { driver, volumeHandle: handle },
      ...(node === undefined ? {} : {
        nodeAffinity: affinity({
          matchExpressions: [{ key: "topology.test/node", operator: "In", values: [node] }],
        }),
      }),
    },
  });
  const ours = { driverName: "test.csi", volumeHandle: "pvc-1", segment: here };
  strictEqual(holdsThisNodesVolume(pv("node-a"), ours), true);
  strictEqual(holdsThisNodesVolume(pv("node-b"), ours), false, "same handle, another node");
  strictEqual(holdsThisNodesVolume(pv("node-a", "other"), ours), false, "another handle");
  strictEqual(holdsThisNodesVolume(pv("node-a", "pvc-1", "other.csi"), ours), false);
  strictEqual(
    holdsThisNodesVolume(pv("node-a", "any"), { driverName: "test.csi", segment: here }),
    true,
  );
  strictEqual(holdsThisNodesVolume(pv(undefined), ours), true, "no affinity cannot tell: kept");
});
