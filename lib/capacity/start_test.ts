import { deepStrictEqual, rejects, strictEqual } from "node:assert/strict";
import { KubeApi } from "../kube/api.ts";
import type { KubeRequest } from "../kube/rest/client.ts";
import { NoAnswerError } from "../kube/rest/fetch.ts";
import { KubeApiError } from "../kube/rest/types.ts";
import { type StartupCall, startupRetry } from "../kube/rest/startup_retry.ts";
import { FatalError } from "../runtime/fatal.ts";
import { CAPACITY_API_MISSING } from "./options.ts";
import { findCapacityOwner, requireCapacityApi } from "./start.ts";
import { recordingRest } from "../../tests/fakes/kube_rest.ts";
import { quiet } from "../../tests/fakes/logger.ts";

const once: StartupCall = (_what, call) => call(new AbortController().signal);

/** The shared fake, answering GETs from a table of paths. */
function apiServer(answers: Record<string, unknown>) {
  return recordingRest([], {
    otherwise: (request) =>
      request.path in answers ? answers[request.path] : new Error(`unexpected ${request.path}`),
  });
}

/** "METHOD path" of each request the fake was sent. */
const asked = (rest: { requests: KubeRequest[] }) =>
  rest.requests.map((request) => `${request.method} ${request.path}`);

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
  await requireCapacityApi(new KubeApi(current), once);
  deepStrictEqual(asked(current), ["GET /apis/storage.k8s.io/v1"]);
  const old = apiServer({ "/apis/storage.k8s.io/v1": STORAGE_V1_123 });
  await rejects(requireCapacityApi(new KubeApi(old), once), (error: unknown) => {
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
  const level1 = await findCapacityOwner(new KubeApi(server), {
    kind: "pod",
    namespace: "csi",
    podName: "agent-1",
    level: 1,
  }, { logger: quiet, call: once });
  strictEqual(level1.current()?.uid, "ds-uid");
  await rejects(
    findCapacityOwner(new KubeApi(server), {
      kind: "pod",
      namespace: "csi",
      podName: "agent-1",
      level: 2,
    }, { logger: quiet, call: once }),
    (error: unknown) => {
      strictEqual(error instanceof FatalError, true);
      strictEqual(
        (error as Error).message,
        'look up owner(s) of pod: apps/v1/DaemonSet "agent" in namespace "csi" has no controlling owner, cannot unwind the ownership further',
      );
      return true;
    },
  );
  deepStrictEqual(asked(server).slice(-2), [
    "GET /apis/apps/v1",
    "GET /apis/apps/v1/namespaces/csi/daemonsets/agent",
  ]);
});

/** The shared fake, calling each of `answers` in turn for a request; then the last one again. */
function answering(answers: (() => unknown)[]) {
  let calls = 0;
  return recordingRest([], {
    otherwise: () => answers[Math.min(calls++, answers.length - 1)]!(),
  });
}

const retrying = (signal = new AbortController().signal) =>
  startupRetry({ signal, logger: quiet, backoff: { baseMs: 1, maxMs: 2 } });
const refused = () => {
  throw new NoAnswerError(new TypeError("tcp connect error: Connection refused"));
};
const unavailable = () => {
  throw new KubeApiError(503, "ServiceUnavailable", "etcd not ready");
};

Deno.test("start-up waits for an API server that does not answer or answers 5xx, then goes on", async () => {
  const server = answering([refused, unavailable, refused, () => STORAGE_V1_124]);
  await requireCapacityApi(new KubeApi(server), retrying());
  strictEqual(server.requests.length, 4);
  const node = answering([refused, () => ({ metadata: { name: "node-a", uid: "node-uid" } })]);
  const owner = await findCapacityOwner(new KubeApi(node), { kind: "node", nodeName: "node-a" }, {
    logger: quiet,
    call: retrying(),
  });
  strictEqual(owner.current()?.uid, "node-uid");
  strictEqual(node.requests.length, 2);
});

Deno.test("start-up still ends at once on a definitive answer: 403, a Node not found, an API not served", async () => {
  const forbidden = answering([() => {
    throw new KubeApiError(403, "Forbidden", 'nodes "node-a" is forbidden');
  }]);
  const choice = { kind: "node", nodeName: "node-a" } as const;
  await rejects(
    findCapacityOwner(new KubeApi(forbidden), choice, { logger: quiet, call: retrying() }),
    (error: unknown) => error instanceof FatalError && /forbidden/.test(error.message),
  );
  strictEqual(forbidden.requests.length, 1);
  const missing = answering([() => {
    throw new KubeApiError(404, "NotFound", 'nodes "node-a" not found');
  }]);
  await rejects(
    findCapacityOwner(new KubeApi(missing), choice, { logger: quiet, call: retrying() }),
    /Node "node-a" \(NODE_NAME\) not found/,
  );
  strictEqual(missing.requests.length, 1);
  const old = answering([refused, () => STORAGE_V1_123]);
  await rejects(requireCapacityApi(new KubeApi(old), retrying()), {
    message: CAPACITY_API_MISSING,
  });
});

Deno.test("start-up's wait for the API server ends with the shutdown signal, with the last error", async () => {
  const stop = new AbortController();
  const server = answering([refused]);
  const waiting = requireCapacityApi(new KubeApi(server), retrying(stop.signal));
  setTimeout(() => stop.abort(), 20);
  await rejects(waiting, NoAnswerError);
});
