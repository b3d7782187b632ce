import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { createProvisioningCaches, createPublishedCapacityCache } from "./caches.ts";
import type { StreamOptions } from "./rest/client.ts";
import { eventually } from "../../tests/fakes/async.ts";
import { recordingRest, silentWatch } from "../../tests/fakes/kube_rest.ts";
import { waitFor } from "../../tests/cluster/wait.ts";
import { quiet } from "../../tests/fakes/logger.ts";

function object(
  name: string,
  options: { node: string; className: string; rv: string; gi: number },
) {
  return {
    metadata: {
      name,
      namespace: "csi",
      resourceVersion: options.rv,
      labels: {
        "csi.storage.k8s.io/drivername": "hostpath.csi.k8s.io",
        "csi.storage.k8s.io/managed-by": `external-provisioner-${options.node}`,
      },
    },
    storageClassName: options.className,
    nodeTopology: { matchLabels: { "topology.hostpath.csi/node": options.node } },
    capacity: `${options.gi}Gi`,
  };
}

Deno.test("createPublishedCapacityCache: every node's objects of the driver, by class, kept current", async () => {
  const rest = recordingRest([], {
    otherwise: () => ({
      metadata: { resourceVersion: "10" },
      items: [
        object("a", { node: "node-a", className: "local", rv: "1", gi: 1 }),
        object("b", { node: "node-b", className: "local", rv: "2", gi: 2 }),
        object("c", { node: "node-c", className: "other", rv: "3", gi: 3 }),
      ],
    }),
    watch: (_request, options) => {
      const line = (type: string, value: unknown) =>
        options.onLine(JSON.stringify({ type, object: value }));
      line("MODIFIED", object("b", { node: "node-b", className: "other", rv: "11", gi: 5 }));
      line("DELETED", object("a", { node: "node-a", className: "local", rv: "12", gi: 1 }));
      return new Promise((resolve) =>
        options.signal.addEventListener("abort", () => resolve("aborted"), { once: true })
      );
    },
  });
  const cache = createPublishedCapacityCache(rest, {
    namespace: "csi",
    driverName: "hostpath.csi.k8s.io",
    logger: quiet,
  });
  const stop = new AbortController();
  const running = cache.informer.run(stop.signal);
  await eventually(() => cache.forClass("other").length === 2, "the watch events applied");
  strictEqual(
    rest.requests[0]?.path,
    "/apis/storage.k8s.io/v1/namespaces/csi/csistoragecapacities",
  );
  strictEqual(
    rest.requests[0]?.query?.["labelSelector"],
    "csi.storage.k8s.io/drivername=hostpath.csi.k8s.io",
  );
  deepStrictEqual(cache.forClass("local"), []);
  deepStrictEqual(
    cache.forClass("other").map((entry) => [entry.publisher, entry.capacityBytes]).sort(),
    [["external-provisioner-node-b", 5n * 1024n ** 3n], [
      "external-provisioner-node-c",
      3n * 1024n ** 3n,
    ]],
  );
  stop.abort();
  await running;
});

/** Lists answer per path from `lists` (read at each list); each path's watch is a stream the test writes to. */
function perPathRest(lists: Record<string, unknown[]>) {
  const streams = new Map<string, StreamOptions>();
  const rest = recordingRest([], {
    otherwise: (request) => ({
      metadata: { resourceVersion: "1" },
      items: lists[request.path] ?? [],
    }),
    watch: (request, options) => {
      streams.set(request.path, options);
      return silentWatch(options);
    },
  });
  const send = (path: string, type: string, object: unknown) =>
    streams.get(path)?.onLine(JSON.stringify({ type, object }));
  const listsOf = (path: string) =>
    rest.requests.filter((request) => request.path === path && request.method === "GET").length;
  return { rest, send, listsOf, streams };
}

const CLAIMS = "/api/v1/persistentvolumeclaims";
const CLASSES = "/apis/storage.k8s.io/v1/storageclasses";

function rawClass(name: string, provisioner: string, rv: string) {
  return { metadata: { name, uid: `uid-${name}`, resourceVersion: rv }, provisioner };
}

Deno.test("createProvisioningCaches: claims of another driver's class are not kept until a class of the driver by that name appears", async () => {
  const claim = {
    metadata: {
      name: "data",
      namespace: "ns",
      uid: "u1",
      resourceVersion: "5",
      annotations: { "tenant.example/notes": "x".repeat(1024) },
    },
    spec: { storageClassName: "local", resources: { requests: { storage: "1Gi" } } },
    status: { phase: "Pending" },
  };
  const lists: Record<string, unknown[]> = {
    [CLASSES]: [rawClass("local", "other.csi.example", "1")],
    [CLAIMS]: [claim],
  };
  const server = perPathRest(lists);
  const caches = createProvisioningCaches(server.rest, {
    nodeName: "node-a",
    driverName: "hostpath.csi.k8s.io",
    templateKeys: () => [],
    keepVolume: () => true,
    volumeLabels: {},
    logger: quiet,
  });
  const stop = new AbortController();
  const running = [caches.claims.run(stop.signal), caches.classes.run(stop.signal)];
  const waits = { timeoutMs: 2000, intervalMs: 5 };
  await waitFor(() => caches.claims.hasSynced(), { description: "claims listed", ...waits });
  strictEqual(caches.classes.hasSynced(), true, "the claims were listed after the classes");
  strictEqual(caches.claims.size, 0);
  await waitFor(() => server.streams.has(CLASSES), { description: "class watch", ...waits });
  server.send(CLASSES, "DELETED", rawClass("local", "other.csi.example", "2"));
  lists[CLASSES] = [rawClass("local", "hostpath.csi.k8s.io", "3")];
  server.send(CLASSES, "ADDED", lists[CLASSES][0]);
  await waitFor(() => caches.claims.size === 1, { description: "claims listed again", ...waits });
  strictEqual(server.listsOf(CLAIMS), 2);
  deepStrictEqual(caches.claims.get("ns/data")?.metadata.annotations, undefined);
  strictEqual(caches.claims.health().restarts.relist, 1);
  stop.abort();
  await Promise.all(running);
});
