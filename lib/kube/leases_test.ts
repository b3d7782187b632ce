import { deepStrictEqual, rejects, strictEqual } from "node:assert/strict";
import { recordingRest } from "../../tests/fakes/kube_rest.ts";
import { annotateLease, LeaseRenewals, listAgentLeases, trimAgentLease } from "./leases.ts";
import { apiError } from "./rest/types.ts";

const signal = new AbortController().signal;
const PATH = "/apis/coordination.k8s.io/v1/namespaces/csi/leases";
const LABELS = {
  "csi.storage.k8s.io/drivername": "hostpath.csi.k8s.io",
  "csi.storage.k8s.io/managed-by": "external-provisioner-node-a",
};
const OWN = {
  namespace: "csi",
  name: "lease-a",
  labels: LABELS,
  holder: "node-a",
  durationSeconds: 60,
  annotations: { "csi-node-provisioner.io/topology-segment": '{"zone":"a"}' },
};

const notFound = () => apiError(404, JSON.stringify({ reason: "NotFound", message: "not found" }));
const conflict = () => apiError(409, JSON.stringify({ reason: "Conflict", message: "changed" }));

Deno.test("trimAgentLease keeps who renews it and when; a Lease of no agent is not kept", () => {
  const raw = {
    metadata: { name: "lease-a", namespace: "csi", resourceVersion: "7", labels: LABELS },
    spec: {
      holderIdentity: "node-a",
      leaseDurationSeconds: 60,
      renewTime: "2026-01-01T00:00:00.000000Z",
    },
  };
  deepStrictEqual(trimAgentLease(raw), {
    name: "lease-a",
    resourceVersion: "7",
    node: "node-a",
    publisher: "external-provisioner-node-a",
    renewTime: "2026-01-01T00:00:00.000000Z",
    durationMs: 60_000,
  });
  const unlabelled = { ...raw, metadata: { name: "x", namespace: "csi", resourceVersion: "7" } };
  strictEqual(trimAgentLease(unlabelled), undefined);
  strictEqual(trimAgentLease({ ...raw, spec: {} }), undefined);
});

Deno.test("LeaseRenewals: reads, creates when missing, then replaces the copy it wrote", async () => {
  const created = { metadata: { name: "lease-a", resourceVersion: "1", labels: LABELS }, spec: {} };
  const rest = recordingRest([notFound(), created, {
    ...created,
    metadata: { ...created.metadata, resourceVersion: "2" },
  }]);
  const renewals = new LeaseRenewals(rest, OWN);
  await renewals.renew(Date.UTC(2026, 0, 1), signal);
  await renewals.renew(Date.UTC(2026, 0, 1, 0, 0, 30), signal);
  deepStrictEqual(rest.requests.map((request) => [request.method, request.path]), [
    ["GET", `${PATH}/lease-a`],
    ["POST", PATH],
    ["PUT", `${PATH}/lease-a`],
  ]);
  deepStrictEqual(rest.requests[1]!.body, {
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: { name: "lease-a", namespace: "csi", labels: LABELS, annotations: OWN.annotations },
    spec: {
      holderIdentity: "node-a",
      leaseDurationSeconds: 60,
      renewTime: "2026-01-01T00:00:00.000000Z",
      acquireTime: "2026-01-01T00:00:00.000000Z",
    },
  });
  const put = rest.requests[2]!.body as {
    metadata: { resourceVersion: string };
    spec: { renewTime: string };
  };
  strictEqual(put.metadata.resourceVersion, "1");
  strictEqual(put.spec.renewTime, "2026-01-01T00:00:30.000000Z");
});

Deno.test("LeaseRenewals: after a conflict it reads the Lease again before the next write", async () => {
  const existing = {
    metadata: { name: "lease-a", resourceVersion: "5" },
    spec: { holderIdentity: "old" },
  };
  const rest = recordingRest([existing, conflict(), existing, existing]);
  const renewals = new LeaseRenewals(rest, OWN);
  await rejects(renewals.renew(0, signal));
  await renewals.renew(1000, signal);
  deepStrictEqual(rest.requests.map((request) => request.method), ["GET", "PUT", "GET", "PUT"]);
  const put = rest.requests[3]!.body as {
    metadata: { labels: unknown };
    spec: { holderIdentity: string };
  };
  strictEqual(put.spec.holderIdentity, "node-a");
  deepStrictEqual(put.metadata.labels, LABELS, "the labels the agents select by are set");
});

Deno.test("listAgentLeases: one list of the named agents' Leases, from the watch cache", async () => {
  const raw = {
    metadata: { name: "lease-a", resourceVersion: "7", labels: LABELS },
    spec: { holderIdentity: "node-a", leaseDurationSeconds: 60, renewTime: "t" },
  };
  const rest = recordingRest([{ items: [raw, { metadata: { name: "other" } }] }]);
  const publishers = ["external-provisioner-node-a", "external-provisioner-node-b"];
  const found = await listAgentLeases(
    rest,
    { namespace: "csi", driverName: "hostpath.csi.k8s.io", publishers },
    signal,
  );
  deepStrictEqual(found.map((lease) => lease.node), ["node-a"]);
  const [request] = rest.requests;
  deepStrictEqual([request!.method, request!.path, request!.query], [
    "GET",
    PATH,
    {
      labelSelector:
        "csi.storage.k8s.io/drivername=hostpath.csi.k8s.io,csi.storage.k8s.io/managed-by in (external-provisioner-node-a,external-provisioner-node-b)",
      resourceVersion: "0",
    },
  ]);
});

Deno.test("trimAgentLease reads the notes: segment, release flag, node-gone-since", () => {
  const raw = {
    metadata: {
      name: "lease-a",
      resourceVersion: "7",
      labels: LABELS,
      annotations: {
        "csi-node-provisioner.io/topology-segment": '{"topology.hostpath.csi/node":"node-a"}',
        "csi-node-provisioner.io/node-loss-release-after": "20s",
        "csi-node-provisioner.io/node-gone-since": "2026-01-01T00:00:00Z",
      },
    },
    spec: { holderIdentity: "node-a", leaseDurationSeconds: 60, renewTime: "t" },
  };
  const lease = trimAgentLease(raw)!;
  deepStrictEqual(lease.segment, { "topology.hostpath.csi/node": "node-a" });
  strictEqual(lease.releaseAfter, "20s");
  strictEqual(lease.nodeGoneSinceMs, Date.UTC(2026, 0, 1));
  const bad = { ...raw.metadata.annotations, "csi-node-provisioner.io/topology-segment": "[1]" };
  const badRaw = { ...raw, metadata: { ...raw.metadata, annotations: bad } };
  strictEqual(trimAgentLease(badRaw)!.segment, undefined);
});

Deno.test("LeaseRenewals: a renewal drops a watcher's node-gone-since note", async () => {
  const existing = {
    metadata: {
      name: "lease-a",
      resourceVersion: "5",
      annotations: {
        "csi-node-provisioner.io/node-gone-since": "2026-01-01T00:00:00Z",
        other: "x",
      },
    },
    spec: {},
  };
  const rest = recordingRest([existing, existing]);
  await new LeaseRenewals(rest, OWN).renew(Date.UTC(2026, 0, 1), signal);
  const put = rest.requests[1]!.body as { metadata: { annotations: Record<string, string> } };
  deepStrictEqual(put.metadata.annotations, { other: "x", ...OWN.annotations });
});

Deno.test("annotateLease: sets and removes notes on the Lease read; 404 gone, 409 conflict", async () => {
  const existing = { metadata: { name: "lease-b", resourceVersion: "3", annotations: { a: "1" } } };
  const rest = recordingRest([existing, existing]);
  const target = { namespace: "csi", name: "lease-b", annotations: { a: null, b: "2" } };
  strictEqual(await annotateLease(rest, target, signal), "updated");
  deepStrictEqual(rest.requests[1]!.body, {
    metadata: { name: "lease-b", resourceVersion: "3", annotations: { b: "2" } },
  });
  strictEqual(await annotateLease(recordingRest([notFound()]), target, signal), "gone");
  strictEqual(
    await annotateLease(recordingRest([existing, conflict()]), target, signal),
    "conflict",
  );
});
