import { deepStrictEqual } from "node:assert/strict";
import { capacity, node, NODES } from "../../../tests/builders/explain.ts";
import { DRIVER, TOPOLOGY_KEY } from "../../../tests/builders/provision.ts";
import { nodeCapacities, nodeLabel } from "./capacity.ts";

const Gi = 1024n ** 3n;
const nodes = NODES.map(node);

Deno.test("objects of another driver are left out; equal capacities are ordered by node", () => {
  const rows = nodeCapacities([
    capacity("node-b", "2Gi"),
    capacity("node-a", "2Gi"),
    capacity("node-c", "9Gi", { driver: "other.example.com" }),
  ], { driverName: DRIVER, nodes, requestBytes: 2n * Gi });
  deepStrictEqual(rows.map((row) => [nodeLabel(row), row.fits]), [["node-a", true], [
    "node-b",
    true,
  ]]);
});

Deno.test("an object whose topology selects no node says which topology it was for", () => {
  const object = capacity("gone", "1Gi");
  const rows = nodeCapacities([object], { driverName: DRIVER, nodes, requestBytes: Gi });
  deepStrictEqual(rows.map(nodeLabel), [`(no node with ${TOPOLOGY_KEY}=gone)`]);
});

Deno.test("matchExpressions select nodes too, and an unknown request fits nowhere", () => {
  const object = {
    ...capacity("node-a", "1Gi"),
    nodeTopology: {
      matchExpressions: [{ key: TOPOLOGY_KEY, operator: "In", values: ["node-a", "node-c"] }],
    },
  };
  const [row] = nodeCapacities([object], { driverName: DRIVER, nodes, requestBytes: undefined });
  deepStrictEqual([row?.nodes, row?.fits], [["node-a", "node-c"], false]);
});
