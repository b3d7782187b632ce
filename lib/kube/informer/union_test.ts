/**
 * The PV cache of createProvisioningCaches(): two watches (this node's
 * labelled PVs, and unlabelled ones) read as one informer, against an
 * in-memory KubeRest that answers each label selector on its own stream.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import type { PersistentVolume } from "../../model/objects.ts";
import { createProvisioningCaches } from "../caches.ts";
import type { CacheChange } from "./informer.ts";
import type { KubeRequest, StreamOptions } from "../rest/client.ts";
import { eventually } from "../../../tests/fakes/async.ts";
import { recordingRest, silentWatch } from "../../../tests/fakes/kube_rest.ts";
import { quiet } from "../../../tests/fakes/logger.ts";

const MINE = "csi.storage.k8s.io/drivername=hostpath.csi.k8s.io," +
  "csi.storage.k8s.io/managed-by=external-provisioner-node-a";
const UNLABELLED = "!csi.storage.k8s.io/managed-by";

function pv(name: string, rv: string, options: { node?: string; labelled?: boolean } = {}) {
  const node = options.node ?? "node-a";
  return {
    metadata: {
      name,
      resourceVersion: rv,
      annotations: { "pv.kubernetes.io/provisioned-by": "hostpath.csi.k8s.io" },
      ...(options.labelled ? { labels: { "csi.storage.k8s.io/managed-by": node } } : {}),
    },
    spec: {
      csi: { driver: "hostpath.csi.k8s.io", volumeHandle: name },
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [{
            matchExpressions: [{ key: "node", operator: "In", values: [node] }],
          }],
        },
      },
    },
  };
}

/**
 * Lists answer per selector (a `refused` selector's list fails); each
 * selector's watch is a stream the test writes lines to.
 */
function perSelectorRest(lists: Record<string, unknown[]>, refused?: string) {
  const streams = new Map<string, StreamOptions>();
  const watches: KubeRequest[] = [];
  const selectorOf = (request: KubeRequest) => String(request.query?.["labelSelector"]);
  const rest = recordingRest([], {
    otherwise: (request) =>
      selectorOf(request) === refused
        ? new Error("connection refused")
        : { metadata: { resourceVersion: "1" }, items: lists[selectorOf(request)] },
    watch: (request, options) => {
      watches.push(request);
      streams.set(selectorOf(request), options);
      return silentWatch(options);
    },
  });
  const send = (selector: string, type: string, object: unknown) =>
    streams.get(selector)!.onLine(JSON.stringify({ type, object }));
  return { rest, requests: () => [...rest.requests, ...watches], streams, send };
}

async function started(lists: Record<string, unknown[]>) {
  const server = perSelectorRest(lists);
  const caches = createProvisioningCaches(server.rest, {
    nodeName: "node-a",
    driverName: "hostpath.csi.k8s.io",
    templateKeys: () => [],
    keepVolume: (volume) =>
      volume.spec.nodeAffinity?.required?.nodeSelectorTerms[0]?.matchExpressions?.[0]
        ?.values?.[0] === "node-a",
    volumeLabels: {
      "csi.storage.k8s.io/drivername": "hostpath.csi.k8s.io",
      "csi.storage.k8s.io/managed-by": "external-provisioner-node-a",
    },
    logger: quiet,
  });
  const changes: CacheChange<PersistentVolume>[] = [];
  caches.volumes.onChange((change) => changes.push(change));
  const stop = new AbortController();
  const running = caches.volumes.run(stop.signal);
  await eventually(() => server.streams.size === 2, "both watches open");
  const end = async () => {
    stop.abort();
    await running;
  };
  return { ...server, volumes: caches.volumes, changes, end };
}

const names = (changes: CacheChange<PersistentVolume>[]) =>
  changes.map((change) => [change.key, change.old?.metadata.name, change.new?.metadata.name]);

Deno.test("the PV cache lists and watches this node's labelled PVs and the unlabelled ones, as one", async () => {
  const world = await started({
    [MINE]: [pv("pvc-new", "5", { labelled: true })],
    [UNLABELLED]: [pv("pvc-old", "3"), pv("pvc-elsewhere", "4", { node: "node-b" })],
  });
  const selectors = world.requests().map((request) => [
    request.query?.["watch"] === true ? "watch" : "list",
    request.query?.["labelSelector"],
  ]).sort();
  deepStrictEqual(
    selectors,
    [
      ["list", UNLABELLED],
      ["list", MINE],
      ["watch", UNLABELLED],
      ["watch", MINE],
    ].sort(),
  );
  strictEqual(world.volumes.hasSynced(), true);
  deepStrictEqual(world.volumes.list().map((volume) => volume.metadata.name).sort(), [
    "pvc-new",
    "pvc-old",
  ]);
  strictEqual(world.volumes.size, 2);
  strictEqual(world.volumes.get("pvc-old")?.metadata.resourceVersion, "3");
  deepStrictEqual(names(world.changes).sort(), [
    ["pvc-new", undefined, "pvc-new"],
    ["pvc-old", undefined, "pvc-old"],
  ]);
  world.send(UNLABELLED, "DELETED", pv("pvc-old", "6"));
  world.send(MINE, "MODIFIED", pv("pvc-new", "7", { labelled: true }));
  deepStrictEqual(names(world.changes.slice(2)), [
    ["pvc-old", "pvc-old", undefined],
    ["pvc-new", "pvc-new", "pvc-new"],
  ]);
  const health = world.volumes.health();
  strictEqual(health.resource, "persistentvolumes");
  deepStrictEqual([health.synced, health.up, health.objects], [true, true, 1]);
  await world.end();
});

Deno.test("a PV that moves from the unlabelled watch to the labelled one is never lost, in either order", async () => {
  const world = await started({ [MINE]: [], [UNLABELLED]: [pv("pvc-a", "1"), pv("pvc-b", "2")] });
  world.changes.length = 0;
  // Labelled watch first: the union holds it throughout; the later delete changes nothing.
  world.send(MINE, "ADDED", pv("pvc-a", "3", { labelled: true }));
  strictEqual(world.volumes.get("pvc-a")?.metadata.resourceVersion, "3");
  deepStrictEqual(world.volumes.list().filter((v) => v.metadata.name === "pvc-a").length, 1);
  strictEqual(world.volumes.size, 2);
  world.send(UNLABELLED, "DELETED", pv("pvc-a", "3"));
  strictEqual(world.volumes.get("pvc-a")?.metadata.resourceVersion, "3");
  deepStrictEqual(names(world.changes), [["pvc-a", "pvc-a", "pvc-a"]]);
  // Unlabelled watch first: gone for a moment, then back.
  world.changes.length = 0;
  world.send(UNLABELLED, "DELETED", pv("pvc-b", "4"));
  strictEqual(world.volumes.get("pvc-b"), undefined);
  world.send(MINE, "ADDED", pv("pvc-b", "4", { labelled: true }));
  strictEqual(world.volumes.get("pvc-b")?.metadata.resourceVersion, "4");
  deepStrictEqual(names(world.changes), [
    ["pvc-b", "pvc-b", undefined],
    ["pvc-b", undefined, "pvc-b"],
  ]);
  await world.end();
});

Deno.test("the PV cache is not synced, nor up, until both watches are", async () => {
  const server = perSelectorRest({ [MINE]: [], [UNLABELLED]: [] }, UNLABELLED);
  const caches = createProvisioningCaches(server.rest, {
    nodeName: "node-a",
    driverName: "hostpath.csi.k8s.io",
    templateKeys: () => [],
    keepVolume: () => true,
    volumeLabels: { "csi.storage.k8s.io/managed-by": "external-provisioner-node-a" },
    logger: quiet,
  });
  const stop = new AbortController();
  const running = caches.volumes.run(stop.signal);
  await eventually(() => server.streams.size === 1, "the labelled watch open");
  await eventually(() => caches.volumes.health().lastError !== undefined, "the failure seen");
  const health = caches.volumes.health();
  deepStrictEqual([caches.volumes.hasSynced(), health.synced, health.up], [false, false, false]);
  strictEqual(health.lastError, "connection refused");
  deepStrictEqual(health.restarts, {
    error: 1,
    expired: 0,
    idle_timeout: 0,
    stream_end: 0,
    relist: 0,
  });
  strictEqual(typeof health.failingSince, "number");
  stop.abort();
  await running;
});
