import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { rendezvous, rendezvousTop } from "./rendezvous.ts";

Deno.test("rendezvous: every agent picks the same candidate, spread evenly, and a leaving candidate moves only its keys", () => {
  const nodes = Array.from({ length: 10 }, (_, index) => `node-${index}`);
  const keys = Array.from({ length: 5000 }, (_, index) => `uid-${index}-${index * 7919}`);
  const wins = new Map<string, number>();
  for (const key of keys) {
    const chosen = rendezvous(key, nodes)!;
    strictEqual(rendezvous(key, [...nodes].reverse()), chosen, "order does not matter");
    wins.set(chosen, (wins.get(chosen) ?? 0) + 1);
  }
  for (const node of nodes) {
    const count = wins.get(node) ?? 0;
    ok(count > 380 && count < 620, `${node} won ${count} of 5000 (expected about 500)`);
  }
  const without = nodes.filter((node) => node !== "node-3");
  for (const key of keys) {
    const before = rendezvous(key, nodes);
    if (before !== "node-3") strictEqual(rendezvous(key, without), before);
  }
  strictEqual(rendezvous("k", []), undefined);
});

Deno.test("rendezvousTop: the highest ranked, the first being rendezvous's pick, in any order given", () => {
  const nodes = Array.from({ length: 20 }, (_, index) => `node-${index}`);
  for (const key of ["a", "b", "c", "d"]) {
    const top = rendezvousTop(key, nodes, 3);
    strictEqual(top.length, 3);
    strictEqual(top[0], rendezvous(key, nodes));
    deepStrictEqual(rendezvousTop(key, [...nodes].reverse(), 3), top);
    const without = nodes.filter((node) => node !== top[1]);
    deepStrictEqual(
      rendezvousTop(key, without, 2),
      [top[0], top[2]],
      "a leaving one moves the rest up",
    );
  }
  deepStrictEqual(rendezvousTop("k", ["x", "x"], 3), ["x"]);
});
