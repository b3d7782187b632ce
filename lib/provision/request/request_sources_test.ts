import { deepStrictEqual } from "node:assert/strict";
import type { Claim, StorageClass } from "../../model/objects.ts";
import type { SourceFacts } from "../source/checks.ts";
import { explainSourceMiss, type PlannedSource } from "../source/plan.ts";
import { prepareProvision, type ProvisionOptions } from "./request.ts";
import {
  claim,
  provisionOptions,
  SNAPSHOT_HANDLE,
  snapshotContent,
  SOURCE_HANDLE,
  sourceClaim,
  sourceVolume,
  storageClass,
  TOPOLOGY_KEY,
  volumeSnapshot,
} from "../../../tests/builders/provision.ts";

const SNAPSHOT_SOURCE = {
  dataSource: { apiGroup: "snapshot.storage.k8s.io", kind: "VolumeSnapshot", name: "snap" },
};
const CLONE_SOURCE = { dataSource: { kind: "PersistentVolumeClaim", name: "origin" } };
const CAN_ALL: Partial<ProvisionOptions> = {
  capabilities: {
    controllerService: true,
    controller: ["CREATE_DELETE_VOLUME", "CREATE_DELETE_SNAPSHOT", "CLONE_VOLUME"],
  },
};
const AT = '(PersistentVolumeClaim "apps/data", spec.dataSource)';

function snapshotFacts(node = "node-a"): SourceFacts {
  return {
    kind: "snapshot",
    snapshot: { ok: true, value: volumeSnapshot() },
    content: { ok: true, value: snapshotContent() },
    sourceVolume: { ok: true, value: sourceVolume({ node }) },
  };
}

function cloneFacts(node = "node-a"): SourceFacts {
  return {
    kind: "clone",
    claim: { ok: true, value: sourceClaim() },
    volume: { ok: true, value: sourceVolume({ node }) },
  };
}

function prepare(
  spec: Partial<Claim["spec"]>,
  options: {
    source?: SourceFacts;
    storageClass?: StorageClass;
    provision?: Partial<ProvisionOptions>;
  } = {},
) {
  return prepareProvision(
    {
      claim: claim({ spec }),
      storageClass: options.storageClass ?? storageClass(),
      source: options.source,
    },
    provisionOptions({ ...CAN_ALL, ...options.provision }),
  );
}

const outcomeText = (outcome: ReturnType<typeof prepare>) =>
  outcome.kind === "problem"
    ? `${outcome.state}/${outcome.retry}: ${outcome.message}`
    : outcome.kind;

Deno.test("prepareProvision() restores: the snapshot handle as volume_content_source, the snapshot kept for its finalizer", () => {
  const plan = prepare(SNAPSHOT_SOURCE, { source: snapshotFacts() });
  deepStrictEqual(plan.kind === "plan" && plan.request.volume_content_source, {
    snapshot: { snapshot_id: SNAPSHOT_HANDLE },
  });
  deepStrictEqual(
    plan.kind === "plan" && plan.source,
    {
      kind: "planned",
      source: { kind: "snapshot", namespace: "apps", name: "snap", field: "spec.dataSource" },
      contentSource: { snapshot: { snapshot_id: SNAPSHOT_HANDLE } },
      location: { kind: "here" },
      warnings: [],
      snapshot: volumeSnapshot(),
    } satisfies PlannedSource,
  );
});

Deno.test("prepareProvision() clones: the source PV's volume handle as volume_content_source", () => {
  const plan = prepare(CLONE_SOURCE, { source: cloneFacts() });
  deepStrictEqual(plan.kind === "plan" && plan.request.volume_content_source, {
    volume: { volume_id: SOURCE_HANDLE },
  });
  deepStrictEqual(plan.kind === "plan" && plan.source?.source.kind, "clone");
});

Deno.test("prepareProvision() checks the source where upstream does: after the claim and volume, before topology and secrets", () => {
  const badSource: SourceFacts = { kind: "clone", claim: { ok: false, error: "gone" } };
  const sourceProblem = "noChange/backoff: error getting handle for DataSource Type " +
    'PersistentVolumeClaim by Name origin: error getting PVC origin (namespace "apps") from api ' +
    `server: gone ${AT}`;
  // Capabilities, selector and size come first.
  deepStrictEqual(
    outcomeText(
      prepare(CLONE_SOURCE, {
        source: badSource,
        provision: {
          capabilities: { controllerService: true, controller: ["CREATE_DELETE_VOLUME"] },
        },
      }),
    ),
    "finished/backoff: CSI driver does not support clone operations: controller CLONE_VOLUME " +
      `capability is not reported ${AT}`,
  );
  deepStrictEqual(
    outcomeText(prepare({ ...CLONE_SOURCE, selector: {} }, { source: badSource })),
    'finished/backoff: claim Selector is not supported (PersistentVolumeClaim "apps/data", spec.selector)',
  );
  deepStrictEqual(
    outcomeText(prepare({ ...CLONE_SOURCE, accessModes: [] }, { source: badSource })),
    'finished/backoff: claim has no access modes (PersistentVolumeClaim "apps/data", spec.accessModes)',
  );
  // The source comes before the topology and the secrets.
  const noTopology = { segment: {} };
  deepStrictEqual(
    outcomeText(prepare(CLONE_SOURCE, { source: badSource, provision: noTopology })),
    sourceProblem,
  );
  const badSecrets = storageClass({
    parameters: { "csi.storage.k8s.io/provisioner-secret-name": "x" },
  });
  deepStrictEqual(
    outcomeText(prepare(CLONE_SOURCE, { source: badSource, storageClass: badSecrets })),
    sourceProblem,
  );
});

Deno.test("prepareProvision() sends a claim whose source is on another node back, with where it is", () => {
  deepStrictEqual(
    outcomeText(prepare(SNAPSHOT_SOURCE, { source: snapshotFacts("node-b") })),
    'reschedule/slow: cannot restore VolumeSnapshot "apps/snap" on node "node-a": its source ' +
      'volume (PersistentVolume "pv-origin") is on the node with ' +
      `${TOPOLOGY_KEY}=node-b, and the volumes of hostpath.csi.k8s.io stay on their node. Run the ` +
      "pod that uses this claim there: give it a nodeAffinity (or nodeSelector) for " +
      `${TOPOLOGY_KEY}=node-b. volume.kubernetes.io/selected-node was removed so that the ` +
      "scheduler places the pod again",
  );
  deepStrictEqual(
    outcomeText(prepare(CLONE_SOURCE, { source: cloneFacts("node-b") })).slice(0, 91),
    'reschedule/slow: cannot clone PersistentVolumeClaim "apps/origin" on node "node-a": its vol',
  );
});

Deno.test("prepareProvision() refuses a source it was not given the facts of", () => {
  deepStrictEqual(
    outcomeText(prepare(SNAPSHOT_SOURCE, { source: cloneFacts() })),
    "noChange/backoff: the VolumeSnapshot snap was not read",
  );
});

Deno.test("explainSourceMiss() explains a NotFound for a source of unknown place, and only that", () => {
  const planned = (location: PlannedSource["location"]): { source: PlannedSource } => ({
    source: {
      kind: "planned",
      source: { kind: "snapshot", namespace: "apps", name: "snap", field: "spec.dataSource" },
      contentSource: { snapshot: { snapshot_id: SNAPSHOT_HANDLE } },
      location,
      warnings: [],
    },
  });
  const unknown = planned({ kind: "unknown", reason: "it is pre-provisioned" });
  const failure = { code: "NotFound", message: "rpc error: code = NotFound desc = no snapshot" };
  deepStrictEqual(explainSourceMiss(failure, unknown, { nodeName: "node-b" }), {
    kind: "problem",
    reason: "ProvisioningFailed",
    message:
      'rpc error: code = NotFound desc = no snapshot: the driver on node "node-b" does not ' +
      'hold the source of VolumeSnapshot "apps/snap", and which node does is not known (it is ' +
      "pre-provisioned). Run the pod that uses this claim on the node that holds it: give it a " +
      "nodeAffinity (or nodeSelector) for that node. volume.kubernetes.io/selected-node was " +
      "removed so that the scheduler places the pod again; this node tries this claim again " +
      "after 5 minutes at the earliest",
    retry: "slow",
    state: "reschedule",
  });
  deepStrictEqual(
    explainSourceMiss({ ...failure, code: "Internal" }, unknown, { nodeName: "n" }),
    undefined,
  );
  deepStrictEqual(
    explainSourceMiss(failure, planned({ kind: "here" }), { nodeName: "n" }),
    undefined,
  );
  deepStrictEqual(explainSourceMiss(failure, { source: undefined }, { nodeName: "n" }), undefined);
});
