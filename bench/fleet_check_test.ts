import { deepStrictEqual, strictEqual } from "node:assert/strict";
import type { V1PersistentVolume, V1PersistentVolumeClaim } from "@kubernetes/client-node";
import { ANN_SELECTED_NODE } from "../lib/model/keys.ts";
import { checkFleet, describeUnbound } from "./fleet_check.ts";

function claim(uid: string, phase: string, node?: string): V1PersistentVolumeClaim {
  return {
    metadata: { uid, name: uid, ...(node ? { annotations: { [ANN_SELECTED_NODE]: node } } : {}) },
    status: { phase },
  };
}

function volumeOf(uid: string): V1PersistentVolume {
  return { spec: { claimRef: { uid } } };
}

Deno.test("checkFleet() passes claims Bound to exactly one PV and counts claims per node", () => {
  const result = checkFleet([claim("a", "Bound", "n1"), claim("b", "Bound", "n1")], {
    volumes: [volumeOf("a"), volumeOf("b")],
    nodes: ["n1", "n2"],
  });
  deepStrictEqual(result, { notBoundOnce: 0, fewestOnANode: 0, mostOnANode: 2 });
});

Deno.test("checkFleet() counts a Pending claim, a claim with two PVs and a Bound claim without one", () => {
  const result = checkFleet(
    [claim("pending", "Pending"), claim("twice", "Bound", "n1"), claim("none", "Bound", "n2")],
    { volumes: [volumeOf("twice"), volumeOf("twice")], nodes: ["n1", "n2"] },
  );
  deepStrictEqual(result.notBoundOnce, 3);
});

Deno.test("describeUnbound() tells unplaced claims from placed ones with and without a PV, by node", () => {
  const claims = [
    claim("bound", "Bound", "n1"),
    claim("unplaced", "Pending"),
    claim("provisioned", "Pending", "n2"),
    claim("waiting", "Pending", "n2"),
    claim("other", "Pending", "n1"),
  ];
  strictEqual(
    describeUnbound(claims, { volumes: [volumeOf("bound"), volumeOf("provisioned")] }),
    "4 of 5 claims not Bound; 3 of them placed on a node, 1 of those with a PV naming them; " +
      "by node: n2: 2 (provisioned, waiting); n1: 1 (other)",
  );
});
