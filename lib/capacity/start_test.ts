import { deepStrictEqual, rejects, strictEqual } from "node:assert/strict";
import { KubeApi } from "../kube/api.ts";
import type { KubeRequest, KubeRest } from "../kube/rest.ts";
import { createLogger } from "../log/logger.ts";
import { FatalError } from "../runtime/fatal.ts";
import { CAPACITY_API_MISSING } from "./options.ts";
import { findCapacityOwner, requireCapacityApi } from "./start.ts";

const quiet = createLogger({ verbosity: 0, sink: { write: () => {} } });

/** An API server that answers GETs from a table of paths; records what was asked. */
function apiServer(answers: Record<string, unknown>): KubeRest & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    request<T>(request: KubeRequest): Promise<T> {
      asked.push(`${request.method} ${request.path}`);
      return request.path in answers
        ? Promise.resolve(answers[request.path] as T)
        : Promise.reject(new Error(`unexpected ${request.path}`));
    },
    stream: () => Promise.reject(new Error("no watch here")),
    close: () => {},
  };
}

const STORAGE_V1_124 = {
  resources: [
    { name: "storageclasses", kind: "StorageClass", namespaced: false },
    { name: "csistoragecapacities", kind: "CSIStorageCapacity", namespaced: true },
  ],
};
const STORAGE_V1_123 = {
  resources: [{ name: "storageclasses", kind: "StorageClass", namespaced: false }],
};

Deno.test("requireCapacityApi(): storage.k8s.io/v1 csistoragecapacities, by discovery", async () => {
  const current = apiServer({ "/apis/storage.k8s.io/v1": STORAGE_V1_124 });
  await requireCapacityApi(new KubeApi(current));
  deepStrictEqual(current.asked, ["GET /apis/storage.k8s.io/v1"]);
  const old = apiServer({ "/apis/storage.k8s.io/v1": STORAGE_V1_123 });
  await rejects(requireCapacityApi(new KubeApi(old)), (error: unknown) => {
    strictEqual(error instanceof FatalError && error.exitCode, 1);
    strictEqual((error as Error).message, CAPACITY_API_MISSING);
    return true;
  });
});

Deno.test("findCapacityOwner(): walks up from the Pod through discovery; a failure is fatal", async () => {
  const server = apiServer({
    "/api/v1": { resources: [{ name: "pods", kind: "Pod", namespaced: true }] },
    "/apis/apps/v1": {
      resources: [
        { name: "daemonsets", kind: "DaemonSet", namespaced: true },
        { name: "daemonsets/status", kind: "DaemonSet", namespaced: true },
      ],
    },
    "/api/v1/namespaces/csi/pods/agent-1": {
      metadata: {
        name: "agent-1",
        uid: "pod-uid",
        ownerReferences: [{
          apiVersion: "apps/v1",
          kind: "DaemonSet",
          name: "agent",
          uid: "ds-uid",
          controller: true,
        }],
      },
    },
    "/apis/apps/v1/namespaces/csi/daemonsets/agent": {
      metadata: { name: "agent", uid: "ds-uid" },
    },
  });
  const signal = new AbortController().signal;
  const level1 = await findCapacityOwner(new KubeApi(server), {
    kind: "pod",
    namespace: "csi",
    podName: "agent-1",
    level: 1,
  }, { logger: quiet, signal });
  strictEqual(level1.current()?.uid, "ds-uid");
  await rejects(
    findCapacityOwner(new KubeApi(server), {
      kind: "pod",
      namespace: "csi",
      podName: "agent-1",
      level: 2,
    }, {
      logger: quiet,
      signal,
    }),
    (error: unknown) => {
      strictEqual(error instanceof FatalError, true);
      strictEqual(
        (error as Error).message,
        'look up owner(s) of pod: apps/v1/DaemonSet "agent" in namespace "csi" has no controlling owner, cannot unwind the ownership further',
      );
      return true;
    },
  );
  deepStrictEqual(server.asked.slice(-2), [
    "GET /apis/apps/v1",
    "GET /apis/apps/v1/namespaces/csi/daemonsets/agent",
  ]);
});
