import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { quiet } from "../../../tests/fakes/logger.ts";
import type { EventRecord } from "../../model/events.ts";
import { nodeLabels } from "../../model/labels.ts";
import type { PersistentVolume } from "../../model/objects.ts";
import { optInClass, sighting } from "../../../tests/builders/liveness.ts";
import { LostVolumeHandler } from "./act.ts";
import type { LostMetrics } from "./metrics.ts";
import { LostNodeReleaser } from "./releaser.ts";

const DRIVER = "hostpath.csi.k8s.io";
const SELF = "external-provisioner-self";
const MIN = 60_000;
const signal = new AbortController().signal;

function volume(name: string, phase: string, className: string): PersistentVolume {
  return {
    metadata: { name, uid: `uid-${name}`, labels: nodeLabels(DRIVER, "lost") },
    spec: {
      csi: { driver: DRIVER, volumeHandle: name },
      persistentVolumeReclaimPolicy: "Delete",
      storageClassName: className,
      claimRef: { namespace: "ns", name: `claim-${name}`, uid: `cuid-${name}` },
    },
    status: { phase },
  };
}

const OPT_IN = optInClass("opt-in", DRIVER);

function world(options: { claimDelete?: "deleted" | { forbidden: string } } = {}) {
  let now = 10 * MIN;
  let nodeExists = false;
  let note: number | undefined;
  const calls: string[] = [];
  const events: EventRecord[] = [];
  const counted: string[] = [];
  const deleted = new Set<string>();
  const lost = sighting("lost", 0);
  const me = sighting("self", Infinity);
  const metrics: LostMetrics = {
    volumes: (action) => void counted.push(action),
    lostNodes: () => {},
    missingOnDriver: () => {},
  };
  const handler = new LostVolumeHandler({
    api: {
      patchFinalizer: (name) => (calls.push(`unfinalize ${name}`), Promise.resolve("patched")),
      deletePersistentVolume: (name, _s, uid) => {
        calls.push(`delete ${name} ${uid}`);
        deleted.add(name);
        return Promise.resolve("deleted");
      },
      deleteClaim: (
        ref,
      ) => (calls.push(`delete claim ${ref.name} ${ref.uid}`),
        Promise.resolve(options.claimDelete ?? "deleted")),
    },
    classes: { get: (name) => name === "opt-in" ? OPT_IN : undefined },
    events: { record: (event) => void events.push(event) },
    metrics,
    logger: quiet,
  });
  const releaser = new LostNodeReleaser({
    leases: {
      agents: () => [me, { ...lost, ...(note === undefined ? {} : { nodeGoneSinceMs: note }) }],
      hasSynced: () => true,
      gone: () => new Set(),
    },
    publishers: { list: () => [SELF, lost.publisher], hasSynced: () => true },
    reads: {
      nodeExists: () => Promise.resolve(nodeExists),
      noteGoneSince: (_lease, sinceMs) => {
        note = sinceMs;
        calls.push(`note ${sinceMs}`);
        return Promise.resolve(true);
      },
      listVolumes: () => {
        calls.push("list");
        return Promise.resolve([
          volume("released", "Released", "plain"),
          volume("bound", "Bound", "plain"),
          volume("bound-opt-in", "Bound", "opt-in"),
        ].filter((pv) => !deleted.has(pv.metadata.name)));
      },
    },
    volumes: handler,
    metrics,
    logger: quiet,
    now: () => now,
  }, { self: SELF, driverName: DRIVER, releaseAfterMs: 20_000 });
  return {
    releaser,
    calls,
    events,
    counted,
    advance: (ms: number) => void (now += ms),
    setNode: (exists: boolean) => void (nodeExists = exists),
  };
}

Deno.test("LostNodeReleaser: notes the deletion, waits the grace, then releases and reports once", async () => {
  const w = world();
  await w.releaser.check(signal);
  deepStrictEqual(w.calls, [`note ${10 * MIN}`]);
  w.advance(19_999);
  await w.releaser.check(signal);
  deepStrictEqual(w.calls.length, 1, "nothing released before the grace");
  w.advance(1);
  await w.releaser.check(signal);
  deepStrictEqual(w.calls.slice(1), [
    "list",
    "unfinalize released",
    "delete released uid-released",
    "delete claim claim-bound-opt-in cuid-bound-opt-in",
  ]);
  deepStrictEqual(w.events.map((e) => [e.reason, e.subject.kind, e.subject.name]), [
    ["LostNodeVolumeReleased", "PersistentVolume", "released"],
    ["LostNodeVolume", "PersistentVolume", "bound"],
    ["LostNodeVolume", "PersistentVolumeClaim", "claim-bound"],
    ["LostNodeVolume", "PersistentVolume", "bound-opt-in"],
    ["LostNodeVolume", "PersistentVolumeClaim", "claim-bound-opt-in"],
    ["LostNodeClaimDeleted", "PersistentVolumeClaim", "claim-bound-opt-in"],
  ]);
  deepStrictEqual(w.counted, ["released", "reported", "reported", "claim_deleted"]);
  await w.releaser.check(signal);
  strictEqual(w.events.length, 6, "no Event twice for one volume");
});

Deno.test("LostNodeReleaser: a Node that exists again clears the note and releases nothing", async () => {
  const w = world();
  await w.releaser.check(signal);
  w.setNode(true);
  w.advance(MIN);
  await w.releaser.check(signal);
  deepStrictEqual(w.calls, [`note ${10 * MIN}`, "note undefined"]);
  deepStrictEqual(w.events, []);
});

Deno.test("LostNodeReleaser: a claim RBAC does not let it delete is a Warning that says so", async () => {
  const refusal = 'persistentvolumeclaims "claim-bound-opt-in" is forbidden: User cannot delete';
  const w = world({ claimDelete: { forbidden: refusal } });
  await w.releaser.check(signal);
  w.advance(MIN);
  await w.releaser.check(signal);
  const refused = w.events.find((e) => e.reason === "LostNodeClaimNotDeleted");
  strictEqual(refused?.subject.name, "claim-bound-opt-in");
  strictEqual(refused.message.includes("delete on persistentvolumeclaims"), true);
  strictEqual(refused.message.includes(refusal), true, "the server's own words");
  strictEqual(w.counted.includes("claim_deleted"), false);
});
