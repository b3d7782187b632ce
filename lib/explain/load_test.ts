import { deepStrictEqual, strictEqual } from "node:assert/strict";
import type { Claim } from "../model/objects.ts";
import type { CoreEvent, Pod } from "../model/workload.ts";
import {
  claim,
  CLAIM_UID,
  sourceClaim,
  sourceVolume,
  storageClass,
} from "../../tests/builders/provision.ts";
import { capacity } from "../../tests/builders/explain.ts";
import { loadSnapshot } from "./load.ts";
import type { ExplainReads } from "./ports.ts";

const TARGET = { namespace: "apps", name: "data", agentSelector: "app=agent" };

function pod(name: string, claimName: string, containers: Pod["spec"]["containers"] = []): Pod {
  return {
    metadata: { name, namespace: "apps", uid: name, resourceVersion: "1" },
    spec: {
      nodeName: "node-a",
      containers,
      volumes: [{ name: "v", persistentVolumeClaim: { claimName } }],
    },
    status: { phase: "Running", conditions: [{ type: "Ready", status: "True" }] },
  };
}

function reads(overrides: Partial<ExplainReads> = {}): ExplainReads & { asked: string[] } {
  const asked: string[] = [];
  const events: Record<string, CoreEvent[]> = {
    data: [{
      metadata: { name: "e2" },
      involvedObject: { kind: "PersistentVolumeClaim", name: "data" },
      reason: "Later",
      lastTimestamp: "2026-11-23T11:00:02Z",
      source: { component: "c" },
    }],
    app: [{
      metadata: { name: "e1" },
      involvedObject: { kind: "Pod", name: "app" },
      reason: "Earlier",
      eventTime: "2026-11-23T11:00:01Z",
      reportingComponent: "default-scheduler",
      series: { count: 3, lastObservedTime: "2026-11-23T11:00:01Z" },
    }],
  };
  return {
    asked,
    claim: (ns: string, name: string) =>
      Promise.resolve(ns === "apps" && name === "data" ? claim() : undefined),
    namespaceExists: (name: string) => Promise.resolve(name === "apps"),
    storageClass: () => Promise.resolve(storageClass()),
    persistentVolume: () => Promise.resolve(undefined),
    persistentVolumes: () =>
      Promise.resolve([
        { metadata: { name: "pv-other" }, spec: { claimRef: { uid: "another" } } },
        { metadata: { name: "pv-made" }, spec: { claimRef: { uid: CLAIM_UID } } },
      ]),
    volumeAttributesClass: () => Promise.resolve(undefined),
    volumeSnapshot: () => Promise.resolve(undefined),
    volumeSnapshotContent: () => Promise.resolve(undefined),
    nodes: () => Promise.resolve([{ metadata: { name: "node-a", labels: { k: "v" } } }]),
    agentLeases: () => Promise.resolve([]),
    storageCapacities: () =>
      Promise.resolve([
        capacity("node-a", "1Gi"),
        capacity("node-a", "1Gi", { className: "other", driver: "other.example.com" }),
      ]),
    pods: (options: { namespace?: string; labelSelector?: string }) => {
      asked.push(JSON.stringify(options));
      return Promise.resolve(
        options.namespace === undefined
          ? [
            pod("agent", "", [{
              name: "csi-provisioner",
              command: ["/bin/p", "--x"],
              args: ["--node-deployment"],
            }]),
          ]
          : [pod("app", "data"), pod("other", "elsewhere")],
      );
    },
    events: (_ns: string, object: { kind: string; name: string }) =>
      Promise.resolve(events[object.name] ?? []),
    ...overrides,
  };
}

Deno.test("the loader keeps the claim's pods, its class's capacity, every agent driver, events in time order", async () => {
  const source = reads();
  const loaded = await loadSnapshot(source, TARGET, new Date("2026-11-23T12:00:00Z"));
  if (loaded.kind !== "snapshot") throw new Error(loaded.message);
  const { snapshot } = loaded;
  deepStrictEqual(snapshot.consumers.map((p) => p.name), ["app"]);
  strictEqual(snapshot.madeFor?.metadata.name, "pv-made");
  deepStrictEqual(snapshot.capacities.map((c) => c.storageClassName), ["fast"]);
  deepStrictEqual(snapshot.agentDrivers, ["hostpath.csi.k8s.io", "other.example.com"]);
  deepStrictEqual(snapshot.events.map((e) => [e.reason, e.component, e.count]), [
    ["Earlier", "default-scheduler", 3],
    ["Later", "c", 1],
  ]);
  deepStrictEqual(snapshot.agentPods[0]?.agentArgs, ["--x", "--node-deployment"]);
  deepStrictEqual(source.asked, ['{"labelSelector":"app=agent"}', '{"namespace":"apps"}']);
});

Deno.test("a missing claim and a missing namespace are told apart", async () => {
  const missing = await loadSnapshot(reads(), { ...TARGET, name: "nope" });
  deepStrictEqual(missing, {
    kind: "missing",
    message: 'PersistentVolumeClaim "nope" not found in namespace "apps"',
  });
  const noNamespace = await loadSnapshot(reads(), { ...TARGET, namespace: "gone" });
  deepStrictEqual(noNamespace, { kind: "missing", message: 'namespace "gone" not found' });
  const unknown = await loadSnapshot(
    reads({ namespaceExists: () => Promise.resolve("unknown" as const) }),
    { ...TARGET, name: "nope" },
  );
  strictEqual(
    unknown.kind === "missing" && unknown.message.startsWith("PersistentVolumeClaim"),
    true,
  );
});

Deno.test("a claim without a class reads no class", async () => {
  const classless: Claim = claim({ spec: { storageClassName: null } });
  let classReads = 0;
  const loaded = await loadSnapshot(
    reads({
      claim: () => Promise.resolve(classless),
      storageClass: () => {
        classReads++;
        return Promise.resolve(undefined);
      },
    }),
    TARGET,
  );
  strictEqual(loaded.kind === "snapshot" && loaded.snapshot.className, "");
  strictEqual(classReads, 0);
});

Deno.test("a clone up for the race: its source claim and that claim's PV are read; once selected, not", async () => {
  const clone = (annotations: Record<string, string>): Claim =>
    claim({
      metadata: { annotations },
      spec: { dataSource: { kind: "PersistentVolumeClaim", name: "origin" } },
    });
  const asked: string[] = [];
  const world = (target: Claim) =>
    reads({
      claim: (_ns, name) => {
        asked.push(`claim ${name}`);
        return Promise.resolve(name === "data" ? target : sourceClaim());
      },
      persistentVolume: (name) => {
        asked.push(`pv ${name}`);
        return Promise.resolve(sourceVolume({ node: "node-b" }));
      },
    });
  const unowned = await loadSnapshot(world(clone({})), TARGET);
  if (unowned.kind !== "snapshot") throw new Error(unowned.message);
  deepStrictEqual(unowned.snapshot.source, {
    kind: "clone",
    claim: { ok: true, value: sourceClaim() },
    volume: { ok: true, value: sourceVolume({ node: "node-b" }) },
  });
  deepStrictEqual(asked.splice(0), ["claim data", "claim origin", "pv pv-origin"]);
  const selected = await loadSnapshot(
    world(clone({ "volume.kubernetes.io/selected-node": "node-b" })),
    TARGET,
  );
  strictEqual(selected.kind === "snapshot" && selected.snapshot.source, undefined);
  deepStrictEqual(asked, ["claim data"]);
});
