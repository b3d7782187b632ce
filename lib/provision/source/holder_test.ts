import { deepStrictEqual } from "node:assert/strict";
import type { CloneFacts, SnapshotFacts } from "./checks.ts";
import { locateSource, sourceRaceVerdict } from "./holder.ts";
import {
  NODE,
  SEGMENT,
  snapshotContent,
  sourceClaim,
  sourceVolume,
  TOPOLOGY_KEY,
  volumeSnapshot,
} from "../../../tests/builders/provision.ts";

const here = { name: NODE, segment: SEGMENT };
const other = { name: "node-b", segment: { [TOPOLOGY_KEY]: "node-b" } };

function cloneOf(node: string): CloneFacts {
  return {
    kind: "clone",
    claim: { ok: true, value: sourceClaim() },
    volume: { ok: true, value: sourceVolume({ node }) },
  };
}

function restoreOf(sourceVolumeFact: SnapshotFacts["sourceVolume"]): SnapshotFacts {
  return {
    kind: "snapshot",
    snapshot: { ok: true, value: volumeSnapshot() },
    content: { ok: true, value: snapshotContent() },
    ...(sourceVolumeFact === undefined ? {} : { sourceVolume: sourceVolumeFact }),
  };
}

function volumeWithoutAffinity() {
  const pv = sourceVolume();
  delete pv.spec.nodeAffinity;
  return pv;
}

Deno.test("sourceRaceVerdict(): only the node that holds a clone's source races", () => {
  deepStrictEqual(sourceRaceVerdict(cloneOf(NODE), here), { ok: true });
  deepStrictEqual(sourceRaceVerdict(cloneOf(NODE), other), {
    ok: false,
    reason: "source",
    message: 'node-b does not hold the claim it clones (PersistentVolume "pv-origin" is on ' +
      `the node with ${TOPOLOGY_KEY}=node-a)`,
  });
});

Deno.test("sourceRaceVerdict(): only the node that holds a snapshot's source volume races", () => {
  const restore = restoreOf({ ok: true, value: sourceVolume({ node: "node-b" }) });
  deepStrictEqual(sourceRaceVerdict(restore, other), { ok: true });
  deepStrictEqual(sourceRaceVerdict(restore, here), {
    ok: false,
    reason: "source",
    message: "node-a does not hold the volume its snapshot was taken of (PersistentVolume " +
      `"pv-origin" is on the node with ${TOPOLOGY_KEY}=node-b)`,
  });
});

Deno.test("sourceRaceVerdict(): every node races when no node is known to hold the source", () => {
  const unknowns = [
    restoreOf({ ok: false, reason: "it is pre-provisioned" }),
    restoreOf(undefined),
    { kind: "clone", claim: { ok: true, value: sourceClaim() } } as CloneFacts,
    { kind: "clone", claim: { ok: false, error: "not found" } } as CloneFacts,
    {
      kind: "clone",
      claim: { ok: true, value: sourceClaim() },
      volume: { ok: false, error: "forbidden" },
    } as CloneFacts,
    // A source volume without node affinity is reachable from every node.
    { ...cloneOf(NODE), volume: { ok: true, value: volumeWithoutAffinity() } } as CloneFacts,
  ];
  for (const facts of unknowns) {
    deepStrictEqual(sourceRaceVerdict(facts, here), { ok: true });
    deepStrictEqual(sourceRaceVerdict(facts, other), { ok: true });
  }
  deepStrictEqual(sourceRaceVerdict(undefined, other), { ok: true });
});

Deno.test("sourceRaceVerdict(): a node without a segment is not left out (nothing tells it apart)", () => {
  deepStrictEqual(sourceRaceVerdict(cloneOf(NODE), { name: "bare", segment: null }), { ok: true });
});

Deno.test("locateSource() says why a source's place is not known", () => {
  deepStrictEqual(locateSource(restoreOf({ ok: false, reason: "it is pre-provisioned" }), null), {
    kind: "unknown",
    reason: "it is pre-provisioned",
  });
  deepStrictEqual(
    locateSource({ kind: "clone", claim: { ok: true, value: sourceClaim() } }, here.segment),
    { kind: "unknown", reason: "the source claim names no volume" },
  );
});
