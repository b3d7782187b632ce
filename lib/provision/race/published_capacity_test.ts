import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import type { PublishedCapacity } from "../../model/storage_capacity.ts";
import {
  delayFactor,
  MIN_DELAY_FACTOR,
  offeredBytes,
  ownDeclineMessage,
  publishers,
  summarizeUnplaceable,
} from "./published_capacity.ts";
import { rendezvous } from "../../model/rendezvous.ts";
import { TOPOLOGY_KEY } from "../../../tests/builders/provision.ts";

const GI = 1024n ** 3n;

function published(node: string, gi: number, extra: Partial<PublishedCapacity> = {}) {
  return {
    publisher: `external-provisioner-${node}`,
    name: `csisc-${node}`,
    uid: `uid-${node}`,
    resourceVersion: "1",
    storageClassName: "local",
    segment: { [TOPOLOGY_KEY]: node },
    capacityBytes: BigInt(gi) * GI,
    ...extra,
  } satisfies PublishedCapacity;
}

Deno.test("delayFactor: upstream's delay when the volume just fits, shorter with more room, at most 4× shorter", () => {
  strictEqual(delayFactor(undefined, GI), 1, "unknown free space");
  strictEqual(delayFactor(GI, GI), 1, "just fits");
  strictEqual(delayFactor(GI / 2n, GI), 1, "does not fit: the caller declines");
  strictEqual(delayFactor(16n * GI, GI), 1 / 2);
  strictEqual(delayFactor(256n * GI, GI), 1 / 3);
  strictEqual(delayFactor(4096n * GI, GI), MIN_DELAY_FACTOR);
  strictEqual(delayFactor(1n << 50n, GI), MIN_DELAY_FACTOR, "never below the floor");
  strictEqual(delayFactor(10n * GI, 0n), 1, "no request size");
  ok(delayFactor(120n * GI, GI) < delayFactor(40n * GI, GI), "more room, sooner");
});

Deno.test("offeredBytes: the capacity, or the maximum volume size when that is smaller", () => {
  strictEqual(offeredBytes(published("a", 10)), 10n * GI);
  strictEqual(offeredBytes(published("a", 10, { maximumVolumeSizeBytes: 2n * GI })), 2n * GI);
  strictEqual(offeredBytes(published("a", 1, { maximumVolumeSizeBytes: 2n * GI })), GI);
  strictEqual(offeredBytes(published("a", 1, { capacityBytes: undefined })), undefined);
});

Deno.test("publishers: one per agent, a duplicate object counts with its larger figure", () => {
  const list = publishers([published("b", 1), published("a", 3), published("b", 5)]);
  deepStrictEqual(list.map((entry) => [entry.publisher, entry.offered]), [
    ["external-provisioner-a", 3n * GI],
    ["external-provisioner-b", 5n * GI],
  ]);
});

Deno.test("summarizeUnplaceable: nobody fits, so one reporter and the largest free space", () => {
  const objects = [
    published("node-a", 1),
    published("node-b", 2),
    published("node-c", 3),
    published("node-d", 0),
  ];
  const summary = summarizeUnplaceable({
    claimUid: "uid-1",
    className: "local",
    requestBytes: 5n * GI,
    objects,
    mayRace: () => true,
  });
  strictEqual(summary.kind, "report");
  if (summary.kind !== "report") return;
  strictEqual(
    summary.message,
    "no node has 5Gi free in class local: largest is node-c with 3Gi (4 nodes publish capacity)",
  );
  strictEqual(summary.reporter, rendezvous("uid-1", objects.map((object) => object.publisher)));
});

Deno.test("summarizeUnplaceable: a node that fits, no publisher, and allowedTopologies", () => {
  const input = { claimUid: "u", className: "local", requestBytes: 2n * GI, mayRace: () => true };
  deepStrictEqual(summarizeUnplaceable({ ...input, objects: [] }), { kind: "noPublishers" });
  deepStrictEqual(
    summarizeUnplaceable({ ...input, objects: [published("a", 1), published("b", 2)] }),
    { kind: "fits" },
  );
  const objects = [published("a", 1), published("b", 9), published("c", 1)];
  const onlyA = (segment: Record<string, string>) => segment[TOPOLOGY_KEY] === "a";
  const limited = summarizeUnplaceable({ ...input, objects, mayRace: onlyA });
  deepStrictEqual(limited, {
    kind: "report",
    reporter: "external-provisioner-a",
    message: "no node has 2Gi free in class local: largest is a with 1Gi " +
      "(3 nodes publish capacity, 1 of them in its allowedTopologies)",
  });
  const none = summarizeUnplaceable({ ...input, objects, mayRace: () => false });
  strictEqual(none.kind, "report");
  if (none.kind === "report") {
    strictEqual(
      none.message,
      "no node that publishes capacity for class local is in its allowedTopologies " +
        "(3 nodes publish capacity)",
    );
  }
  const single = summarizeUnplaceable({ ...input, objects: [published("a", 1)] });
  ok(single.kind === "report" && single.message.endsWith("(1 node publishes capacity)"));
});

Deno.test("10 nodes, 50 claims nobody can take: each agent computes the same reporter, so 50 reports, not 500", () => {
  const nodes = Array.from({ length: 10 }, (_, index) => `node-${index}`);
  const objects = nodes.map((node, index) => published(node, index + 1));
  let reports = 0;
  for (let claim = 0; claim < 50; claim++) {
    for (const node of nodes) {
      const summary = summarizeUnplaceable({
        claimUid: `claim-${claim}`,
        className: "local",
        requestBytes: 20n * GI,
        objects,
        mayRace: () => true,
      });
      if (summary.kind === "report" && summary.reporter === `external-provisioner-${node}`) {
        reports++;
      }
    }
  }
  strictEqual(reports, 50);
});

Deno.test("ownDeclineMessage names the node, its free space and where the figure comes from", () => {
  strictEqual(
    ownDeclineMessage("node-a", {
      className: "local",
      freeBytes: 3n * GI,
      requestBytes: 5n * GI,
      source: "GetCapacity",
    }),
    "node node-a has 3Gi free in class local (GetCapacity), the claim requests 5Gi",
  );
});
