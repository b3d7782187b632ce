import { deepStrictEqual } from "node:assert/strict";
import type { TopologySelectorTerm } from "../model/objects.ts";
import {
  accessibilityRequirements,
  flattenAllowedTopologies,
  formatTerm,
  isSubset,
  termOf,
} from "./requirements.ts";
import { SEGMENT, TOPOLOGY_KEY as KEY } from "../../tests/builders/provision.ts";

function allowed(...values: string[][]): TopologySelectorTerm[] {
  return values.map((list) => ({ matchLabelExpressions: [{ key: KEY, values: list }] }));
}

function requirements(
  allowedTopologies: TopologySelectorTerm[] | undefined,
  strictTopology: boolean,
  segment: Record<string, string> | null = SEGMENT,
) {
  return accessibilityRequirements({ segment, nodeName: "node-a", allowedTopologies }, {
    strictTopology,
  });
}

const own = { segments: SEGMENT };
const other = (node: string) => ({ segments: { [KEY]: node } });

Deno.test("accessibilityRequirements() strict without allowedTopologies: only our segment", () => {
  deepStrictEqual(requirements(undefined, true), {
    ok: true,
    value: { requisite: [own], preferred: [own] },
  });
});

Deno.test("accessibilityRequirements() strict with allowedTopologies that include us: only our segment", () => {
  deepStrictEqual(requirements(allowed(["node-b", "node-a"]), true), {
    ok: true,
    value: { requisite: [own], preferred: [own] },
  });
});

Deno.test("accessibilityRequirements() strict with allowedTopologies that exclude us: upstream's error", () => {
  deepStrictEqual(requirements(allowed(["node-c"], ["node-b"]), true), {
    ok: false,
    error: `selected node '"node-a"' topology '[{${KEY} node-a}]' is not in allowed topologies: ` +
      `[[{${KEY} node-c}] [{${KEY} node-b}]]`,
  });
});

Deno.test("accessibilityRequirements() strict accepts an allowed term that is a subset of a multi-key segment", () => {
  const segment = { zone: "z1", [KEY]: "node-a" };
  const zoneOnly: TopologySelectorTerm[] = [{
    matchLabelExpressions: [{ key: "zone", values: ["z1"] }],
  }];
  deepStrictEqual(requirements(zoneOnly, true, segment), {
    ok: true,
    value: { requisite: [{ segments: segment }], preferred: [{ segments: segment }] },
  });
});

Deno.test("accessibilityRequirements() non-strict without allowedTopologies: our segment, as the fake Node aggregates", () => {
  deepStrictEqual(requirements(undefined, false), {
    ok: true,
    value: { requisite: [own], preferred: [own] },
  });
  deepStrictEqual(requirements([], false), {
    ok: true,
    value: { requisite: [own], preferred: [own] },
  });
});

Deno.test("accessibilityRequirements() non-strict with allowedTopologies: sorted, deduplicated, preferred rotated to us", () => {
  deepStrictEqual(requirements(allowed(["node-c", "node-a"], ["node-b", "node-c"]), false), {
    ok: true,
    value: {
      requisite: [own, other("node-b"), other("node-c")],
      preferred: [own, other("node-b"), other("node-c")],
    },
  });
  deepStrictEqual(requirements(allowed(["node-0", "node-b", "node-a"]), false), {
    ok: true,
    value: {
      requisite: [other("node-0"), own, other("node-b")],
      preferred: [own, other("node-b"), other("node-0")],
    },
  });
});

Deno.test("accessibilityRequirements() non-strict with allowedTopologies that exclude us: upstream's error", () => {
  deepStrictEqual(requirements(allowed(["node-c", "node-b"]), false), {
    ok: false,
    error: `topology [{${KEY} node-a}] from selected node "node-a" is not in requisite: ` +
      `[[{${KEY} node-b}] [{${KEY} node-c}]]`,
  });
});

Deno.test("accessibilityRequirements() non-strict with only empty allowed terms sends no requirements", () => {
  deepStrictEqual(requirements([{}, { matchLabelExpressions: [] }], false), {
    ok: true,
    value: null,
  });
});

Deno.test("accessibilityRequirements() needs a segment: upstream's error for a node without topology", () => {
  const error = { ok: false, error: "no topology key found for node node-a" };
  deepStrictEqual(requirements(undefined, true, null), error);
  deepStrictEqual(requirements(undefined, false, {}), error);
});

Deno.test("flattenAllowedTopologies() distributes OR over AND (upstream's example)", () => {
  const terms: TopologySelectorTerm[] = [{
    matchLabelExpressions: [
      { key: "zone", values: ["zone1", "zone2"] },
      { key: "rack", values: ["rackA", "rackB"] },
    ],
  }, { matchLabelExpressions: [{ key: "zone", values: ["zone3"] }] }];
  deepStrictEqual(flattenAllowedTopologies(terms), [
    [["rack", "rackA"], ["zone", "zone1"]],
    [["rack", "rackA"], ["zone", "zone2"]],
    [["rack", "rackB"], ["zone", "zone1"]],
    [["rack", "rackB"], ["zone", "zone2"]],
    [["zone", "zone3"]],
  ]);
});

Deno.test("isSubset() requires every pair of the term in the other term", () => {
  const node = termOf({ zone: "z1", rack: "r1", host: "h1" });
  deepStrictEqual(isSubset([], node), true);
  deepStrictEqual(isSubset(termOf({ zone: "z1" }), node), true);
  deepStrictEqual(isSubset(termOf({ zone: "z1", host: "h1" }), node), true);
  deepStrictEqual(isSubset(termOf({ zone: "z2" }), node), false);
  deepStrictEqual(isSubset(termOf({ region: "x" }), node), false);
});

Deno.test("formatTerm() prints a term as Go's %v does", () => {
  deepStrictEqual(formatTerm(termOf({ b: "2", a: "1" })), "[{a 1} {b 2}]");
});
