import { strictEqual } from "node:assert/strict";
import type { Claim } from "../../model/objects.ts";
import { Commitments } from "./commitments.ts";
import { claim as buildClaim, NODE } from "../../../tests/builders/provision.ts";

const GI = 1024n ** 3n;

function selected(name: string, node: string, spec: Partial<Claim["spec"]> = {}): Claim {
  return buildClaim({
    metadata: {
      name,
      uid: `uid-${name}`,
      annotations: { "volume.kubernetes.io/selected-node": node },
    },
    spec: { resources: { requests: { storage: "2Gi" } }, ...spec },
  });
}

Deno.test("Commitments: claims selected to this node count until bound, gone or another node's", () => {
  const commitments = new Commitments(NODE);
  commitments.observe({ key: "apps/a", new: selected("a", NODE) });
  commitments.observe({ key: "apps/b", new: selected("b", NODE) });
  commitments.observe({ key: "apps/c", new: selected("c", "node-b") });
  strictEqual(commitments.bytes("fast"), 4n * GI);
  strictEqual(commitments.bytes("fast", "apps/a"), 2n * GI, "leaving out the claim itself");
  strictEqual(commitments.bytes("slow"), 0n, "per class");
  commitments.observe({ key: "apps/a", new: selected("a", NODE, { volumeName: "pvc-a" }) });
  commitments.observe({ key: "apps/b", new: undefined });
  strictEqual(commitments.size, 0);
});

Deno.test("Commitments: an answered claim stops counting, even on its later changes before binding", () => {
  const commitments = new Commitments(NODE);
  commitments.observe({ key: "apps/a", new: selected("a", NODE) });
  commitments.answered("apps/a", "uid-a");
  strictEqual(commitments.bytes("fast"), 0n);
  commitments.observe({ key: "apps/a", new: selected("a", NODE) });
  strictEqual(commitments.bytes("fast"), 0n, "answered: the driver counts it");
  commitments.observe({ key: "apps/a", new: undefined });
  commitments.observe({ key: "apps/a", new: selected("a", NODE) });
  strictEqual(commitments.bytes("fast"), 2n * GI, "a new selection counts again");
});

Deno.test("Commitments: settling a claim leaves other claims and an older uid of the same key alone", () => {
  const commitments = new Commitments(NODE);
  commitments.observe({ key: "apps/a", new: selected("a", NODE) });
  commitments.observe({ key: "apps/b", new: selected("b", NODE) });
  commitments.answered("apps/a", "uid-of-an-earlier-claim-a");
  strictEqual(commitments.bytes("fast"), 4n * GI, "not this claim a: nothing answered");
  commitments.answered("apps/a", "uid-a");
  strictEqual(commitments.bytes("fast"), 2n * GI, "only b counts");
});

Deno.test("Commitments: a turn's commitment is released only for its own claim", () => {
  const commitments = new Commitments(NODE);
  commitments.commit("apps/a", selected("a", ""));
  commitments.release("apps/a", "uid-other");
  strictEqual(commitments.size, 1);
  commitments.release("apps/a", "uid-a");
  strictEqual(commitments.size, 0);
});
