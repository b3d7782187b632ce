import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { quiet } from "../../../tests/fakes/logger.ts";
import { CsiError } from "../../csi/status.ts";
import type { EventRecord } from "../../model/events.ts";
import type { PersistentVolume } from "../../model/objects.ts";
import { LostVolumeHandler } from "./act.ts";
import { checkVolumesOnDriver, type VolumeLookup } from "./driver_check.ts";
import type { LostMetrics } from "./metrics.ts";

const KEY = "topology.hostpath.csi/node";
const signal = new AbortController().signal;

function pv(name: string, options: { node?: string; phase?: string } = {}): PersistentVolume {
  return {
    metadata: { name, uid: `uid-${name}` },
    spec: {
      csi: { driver: "hostpath.csi.k8s.io", volumeHandle: `h-${name}` },
      persistentVolumeReclaimPolicy: "Delete",
      storageClassName: "plain",
      claimRef: { namespace: "ns", name: `claim-${name}`, uid: `cuid-${name}` },
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [{
            matchExpressions: [{ key: KEY, operator: "In", values: [options.node ?? "a"] }],
          }],
        },
      },
    },
    status: { phase: options.phase ?? "Bound" },
  };
}

const PVS = [
  pv("kept"),
  pv("gone"),
  pv("released", { phase: "Released" }),
  pv("other", { node: "b" }),
];

function check(csi: VolumeLookup, capabilities: string[]) {
  const events: EventRecord[] = [];
  let gauge = -1;
  const metrics: LostMetrics = {
    volumes: () => {},
    lostNodes: () => {},
    missingOnDriver: (count) => void (gauge = count),
  };
  const handler = new LostVolumeHandler({
    api: {
      patchFinalizer: () => Promise.reject(new Error("no write")),
      deletePersistentVolume: () => Promise.reject(new Error("no write")),
      deleteClaim: () => Promise.reject(new Error("no write")),
    },
    classes: { get: () => undefined },
    events: { record: (event) => void events.push(event) },
    metrics,
    logger: quiet,
  });
  const run = checkVolumesOnDriver({
    csi,
    volumes: { list: () => PVS },
    handler,
    metrics,
    logger: quiet,
  }, {
    name: "hostpath.csi.k8s.io",
    segment: { [KEY]: "a" },
    capabilities: new Set(capabilities as never[]),
    releaseOn: true,
  }, signal);
  return { run, events, gauge: () => gauge };
}

const neverCalled: VolumeLookup = {
  listVolumes: () => Promise.reject(new Error("not called")),
  getVolume: () => Promise.reject(new Error("not called")),
};

Deno.test("checkVolumesOnDriver: ListVolumes, page after page; the Bound PVs of this node it lacks are reported", async () => {
  const tokens: string[] = [];
  const pages = [
    { entries: [{ volume: { volume_id: "h-other" } }], next_token: "2" },
    { entries: [{ volume: { volume_id: "h-kept" } }], next_token: "" },
  ];
  const c = check({
    ...neverCalled,
    listVolumes: (
      request,
    ) => (tokens.push(request.starting_token), Promise.resolve(pages.shift()!)),
  }, ["LIST_VOLUMES", "GET_VOLUME"]);
  deepStrictEqual((await c.run).map((v) => v.metadata.name), ["gone"]);
  deepStrictEqual(tokens, ["", "2"]);
  strictEqual(c.gauge(), 1);
  deepStrictEqual(c.events.map((e) => [e.reason, e.subject.kind, e.subject.name]), [
    ["VolumeMissingOnDriver", "PersistentVolume", "gone"],
    ["VolumeMissingOnDriver", "PersistentVolumeClaim", "claim-gone"],
  ]);
});

Deno.test("checkVolumesOnDriver: ControllerGetVolume's NOT_FOUND is missing; without either RPC nothing is checked", async () => {
  const c = check({
    ...neverCalled,
    getVolume: (request) =>
      request.volume_id === "h-gone"
        ? Promise.reject(new CsiError("ControllerGetVolume", 5, "no such volume"))
        : Promise.resolve({}),
  }, ["GET_VOLUME"]);
  deepStrictEqual((await c.run).map((v) => v.metadata.name), ["gone"]);
  const none = check(neverCalled, ["CREATE_DELETE_VOLUME"]);
  deepStrictEqual(await none.run, []);
  deepStrictEqual(none.events, []);
});
