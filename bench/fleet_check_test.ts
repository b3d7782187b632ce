import { deepStrictEqual } from "node:assert/strict";
import type { V1PersistentVolume, V1PersistentVolumeClaim } from "@kubernetes/client-node";
import { SELECTED_NODE } from "../tests/cluster/workloads.ts";
import { checkFleet } from "./fleet_check.ts";

function claim(uid: string, phase: string, node?: string): V1PersistentVolumeClaim {
  return {
    metadata: { uid, ...(node ? { annotations: { [SELECTED_NODE]: node } } : {}) },
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
