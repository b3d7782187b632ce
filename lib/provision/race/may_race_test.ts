import { deepStrictEqual, strictEqual } from "node:assert/strict";
import type { StorageClass } from "../../model/objects.ts";
import { mayRace } from "./may_race.ts";
import type { CloneFacts } from "../source/checks.ts";
import {
  claim,
  NODE,
  SEGMENT,
  sourceClaim,
  sourceVolume,
  storageClass,
  TOPOLOGY_KEY,
} from "../../../tests/builders/provision.ts";

const immediate = (allowed?: StorageClass["allowedTopologies"]) =>
  storageClass({
    volumeBindingMode: "Immediate",
    ...(allowed === undefined ? {} : { allowedTopologies: allowed }),
  });
const node = { name: NODE, segment: SEGMENT };
const allowing = (...values: string[]) => [{
  matchLabelExpressions: [{ key: TOPOLOGY_KEY, values }],
}];
const strict = { strictTopology: true, topologySupported: true };
const loose = { strictTopology: false, topologySupported: true };

Deno.test("mayRace: every node races for a class without allowedTopologies", () => {
  deepStrictEqual(mayRace({ claim: claim(), storageClass: immediate(), node }, strict), {
    ok: true,
  });
  deepStrictEqual(mayRace({ claim: claim(), storageClass: immediate([]), node }, loose), {
    ok: true,
  });
});

Deno.test("mayRace: allowedTopologies that include the node's segment, strict or not", () => {
  for (const options of [strict, loose]) {
    const input = { claim: claim(), storageClass: immediate(allowing("node-z", NODE)), node };
    strictEqual(mayRace(input, options).ok, true);
  }
});

Deno.test("mayRace: a node outside allowedTopologies never races, with upstream's log line", () => {
  for (const options of [strict, loose]) {
    const verdict = mayRace(
      { claim: claim(), storageClass: immediate(allowing("node-b", "node-c")), node },
      options,
    );
    strictEqual(verdict.ok, false);
    if (verdict.ok) continue;
    strictEqual(verdict.reason, "topology");
    strictEqual(
      verdict.message.startsWith(
        "node-a: ignoring PVC apps/data, allowed topologies is not compatible: ",
      ),
      true,
      verdict.message,
    );
  }
});

Deno.test("mayRace: without topology support allowedTopologies cannot be checked, as upstream", () => {
  const input = { claim: claim(), storageClass: immediate(allowing("node-b")), node };
  strictEqual(mayRace(input, { strictTopology: true, topologySupported: false }).ok, true);
});

Deno.test("mayRace: only the node that holds a clone's source races for it", () => {
  const clone = claim({ spec: { dataSource: { kind: "PersistentVolumeClaim", name: "origin" } } });
  const source: CloneFacts = {
    kind: "clone",
    claim: { ok: true, value: sourceClaim() },
    volume: { ok: true, value: sourceVolume({ node: "node-b" }) },
  };
  const holder = { name: "node-b", segment: { [TOPOLOGY_KEY]: "node-b" } };
  const input = { claim: clone, storageClass: immediate(), source };
  strictEqual(mayRace({ ...input, node: holder }, strict).ok, true);
  deepStrictEqual(mayRace({ ...input, node }, strict), {
    ok: false,
    reason: "source",
    message: 'node-a does not hold the claim it clones (PersistentVolume "pv-origin" is on ' +
      `the node with ${TOPOLOGY_KEY}=node-b)`,
  });
  const outside = { ...input, storageClass: immediate(allowing("node-c")), node: holder };
  const excluded = mayRace(outside, strict);
  strictEqual(excluded.ok ? "races" : excluded.reason, "topology", "allowedTopologies first");
});
