import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { createPublishedCapacityCache } from "./caches.ts";
import { eventually } from "../../tests/fakes/async.ts";
import { recordingRest } from "../../tests/fakes/kube_rest.ts";
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
