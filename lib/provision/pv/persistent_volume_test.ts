import { deepStrictEqual } from "node:assert/strict";
import type { CreateVolumeResponse, Volume } from "../../csi/types.ts";
import { nodeLabels } from "../../model/labels.ts";
import type { Claim, StorageClass } from "../../model/objects.ts";
import {
  buildPersistentVolume,
  orphanedVolumeMessage,
  type PersistentVolumeOptions,
  type PersistentVolumeOutcome,
} from "./persistent_volume.ts";
import { prepareProvision, type ProvisionPlan } from "../request/request.ts";
import {
  claim,
  CLAIM_UID,
  createdVolume,
  DRIVER,
  NODE,
  persistentVolumeOptions,
  provisionOptions,
  SEGMENT,
  storageClass,
  TOPOLOGY_KEY,
} from "../../../tests/builders/provision.ts";

const VOLUME = `pvc-${CLAIM_UID}`;

const IDENTITY = "1700000000000-1234-hostpath.csi.k8s.io-node-a";

function planFor(theClaim: Claim, theClass: StorageClass): ProvisionPlan {
  const plan = prepareProvisionFor(theClaim, theClass);
  if (plan.kind !== "plan") throw new Error(JSON.stringify(plan));
  return plan;
}

function prepareProvisionFor(theClaim: Claim, theClass: StorageClass) {
  return prepareProvision({ claim: theClaim, storageClass: theClass }, provisionOptions());
}

function response(volume: Partial<Volume> | null = {}): CreateVolumeResponse {
  return volume === null ? { volume: null } : createdVolume(volume);
}

function build(
  overrides: {
    claim?: Claim;
    storageClass?: StorageClass;
    response?: CreateVolumeResponse;
    options?: Partial<PersistentVolumeOptions>;
  } = {},
): PersistentVolumeOutcome {
  const theClaim = overrides.claim ?? claim();
  const theClass = overrides.storageClass ?? storageClass();
  return buildPersistentVolume(
    {
      plan: planFor(theClaim, theClass),
      claim: theClaim,
      storageClass: theClass,
      response: overrides.response ?? response(),
    },
    persistentVolumeOptions({ identity: IDENTITY, ...overrides.options }),
  );
}

Deno.test("buildPersistentVolume() builds the PV upstream would save, labelled as this node's", () => {
  deepStrictEqual(build({ response: response({ volume_context: { pool: "fast" } }) }), {
    kind: "persistentVolume",
    capacityBytes: 1n << 30n,
    volume: {
      apiVersion: "v1",
      kind: "PersistentVolume",
      metadata: {
        name: VOLUME,
        annotations: {
          "pv.kubernetes.io/provisioned-by": DRIVER,
          "volume.kubernetes.io/provisioner-deletion-secret-name": "",
          "volume.kubernetes.io/provisioner-deletion-secret-namespace": "",
        },
        finalizers: ["external-provisioner.volume.kubernetes.io/finalizer"],
        // Not upstream's: the selector of this node's PV watch.
        labels: {
          "csi.storage.k8s.io/drivername": DRIVER,
          "csi.storage.k8s.io/managed-by": `external-provisioner-${NODE}`,
        },
      },
      spec: {
        accessModes: ["ReadWriteOnce"],
        capacity: { storage: "1Gi" },
        csi: {
          driver: DRIVER,
          volumeHandle: "vol-1",
          volumeAttributes: {
            "storage.kubernetes.io/csiProvisionerIdentity": IDENTITY,
            pool: "fast",
          },
        },
        claimRef: {
          apiVersion: "v1",
          kind: "PersistentVolumeClaim",
          namespace: "apps",
          name: "data",
          uid: CLAIM_UID,
          resourceVersion: "42",
        },
        storageClassName: "fast",
        persistentVolumeReclaimPolicy: "Delete",
        volumeMode: "Filesystem",
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [{
              matchExpressions: [{ key: TOPOLOGY_KEY, operator: "In", values: [NODE] }],
            }],
          },
        },
      },
    },
  });
});

Deno.test("buildPersistentVolume() records secrets, fsType, mount options and the VAC name", () => {
  const theClass = storageClass({
    parameters: {
      "csi.storage.k8s.io/fstype": "xfs",
      "csi.storage.k8s.io/secret-name": "shared",
      "csi.storage.k8s.io/secret-namespace": "vault",
      "csi.storage.k8s.io/controller-modify-secret-name": "modify",
      "csi.storage.k8s.io/controller-modify-secret-namespace": "vault",
    },
    mountOptions: ["noatime"],
    reclaimPolicy: "Retain",
  });
  const outcome = build({ storageClass: theClass });
  if (outcome.kind !== "persistentVolume") throw new Error(JSON.stringify(outcome));
  const pv = outcome.volume;
  const shared = { name: "shared", namespace: "vault" };
  deepStrictEqual(pv.metadata.annotations, {
    "pv.kubernetes.io/provisioned-by": DRIVER,
    "volume.kubernetes.io/provisioner-deletion-secret-name": "shared",
    "volume.kubernetes.io/provisioner-deletion-secret-namespace": "vault",
    "volume.kubernetes.io/controller-modify-secret-name": "modify",
    "volume.kubernetes.io/controller-modify-secret-namespace": "vault",
  });
  deepStrictEqual(pv.spec.csi?.fsType, "xfs");
  deepStrictEqual(
    [
      pv.spec.csi?.controllerPublishSecretRef,
      pv.spec.csi?.nodeStageSecretRef,
      pv.spec.csi?.nodePublishSecretRef,
    ],
    [shared, shared, shared],
  );
  deepStrictEqual([pv.spec.csi?.controllerExpandSecretRef, pv.spec.csi?.nodeExpandSecretRef], [
    shared,
    shared,
  ]);
  deepStrictEqual(pv.spec.mountOptions, ["noatime"]);
  deepStrictEqual(pv.spec.persistentVolumeReclaimPolicy, "Retain");
});

Deno.test("buildPersistentVolume() sets volumeAttributesClassName from the plan", () => {
  const theClaim = claim({ spec: { volumeAttributesClassName: "gold" } });
  const plan: ProvisionPlan = {
    ...planFor(claim(), storageClass()),
    volumeAttributesClassName: "gold",
  };
  const outcome = buildPersistentVolume(
    { plan, claim: theClaim, storageClass: storageClass(), response: response() },
    persistentVolumeOptions({ identity: IDENTITY }),
  );
  deepStrictEqual(
    outcome.kind === "persistentVolume" && outcome.volume.spec.volumeAttributesClassName,
    "gold",
  );
});

Deno.test("buildPersistentVolume() gives Block volumes no fsType", () => {
  const outcome = build({
    claim: claim({ spec: { volumeMode: "Block" } }),
    storageClass: storageClass({ parameters: { "csi.storage.k8s.io/fstype": "ext4" } }),
  });
  if (outcome.kind !== "persistentVolume") throw new Error(JSON.stringify(outcome));
  deepStrictEqual([outcome.volume.spec.csi?.fsType, outcome.volume.spec.volumeMode], [
    undefined,
    "Block",
  ]);
});

Deno.test("buildPersistentVolume() lets the driver's volume_context win over the identity key", () => {
  const outcome = build({
    response: response({
      volume_context: { "storage.kubernetes.io/csiProvisionerIdentity": "driver's" },
    }),
  });
  deepStrictEqual(
    outcome.kind === "persistentVolume" && outcome.volume.spec.csi?.volumeAttributes,
    { "storage.kubernetes.io/csiProvisionerIdentity": "driver's" },
  );
});

Deno.test("buildPersistentVolume() marks the PV read-only only for a lone ROX mode with --controller-publish-readonly", () => {
  const readOnly = (accessModes: string[], controllerPublishReadonly: boolean) => {
    const outcome = build({
      claim: claim({ spec: { accessModes } }),
      options: { controllerPublishReadonly },
    });
    return outcome.kind === "persistentVolume" ? outcome.volume.spec.csi?.readOnly : "not built";
  };
  deepStrictEqual(readOnly(["ReadOnlyMany"], true), true);
  deepStrictEqual(readOnly(["ReadOnlyMany"], false), undefined);
  deepStrictEqual(readOnly(["ReadOnlyMany", "ReadWriteMany"], true), undefined);
  deepStrictEqual(readOnly(["ReadWriteOnce"], true), undefined);
});

Deno.test("buildPersistentVolume() records the requested size when the driver reports 0", () => {
  const outcome = build({ response: response({ capacity_bytes: "0" }) });
  deepStrictEqual(
    outcome.kind === "persistentVolume" && [outcome.capacityBytes, outcome.volume.spec.capacity],
    [1n << 30n, { storage: "1Gi" }],
  );
});

Deno.test("buildPersistentVolume() records a larger volume with its real size", () => {
  const outcome = build({ response: response({ capacity_bytes: "1610612736" }) });
  deepStrictEqual(outcome.kind === "persistentVolume" && outcome.volume.spec.capacity, {
    storage: "1536Mi",
  });
});

Deno.test("buildPersistentVolume() reports a volume smaller than requested for cleanup", () => {
  deepStrictEqual(build({ response: response({ capacity_bytes: "1000000000" }) }), {
    kind: "tooSmall",
    volumeId: "vol-1",
    capacityBytes: 1_000_000_000n,
    requiredBytes: 1n << 30n,
    message: "created volume capacity 1000000000 less than requested capacity 1073741824",
    state: "inBackground",
  });
});

Deno.test("orphanedVolumeMessage() extends the too-small message as upstream does", () => {
  deepStrictEqual(
    orphanedVolumeMessage("created volume capacity 1 less than requested capacity 2", {
      volumeName: VOLUME,
      error: "rpc error: code = Internal desc = busy",
    }),
    `created volume capacity 1 less than requested capacity 2. Cleanup of volume ${VOLUME} failed, volume is orphaned: rpc error: code = Internal desc = busy`,
  );
});

Deno.test("buildPersistentVolume() leaves out node affinity without topology support or topology", () => {
  const unsupported = build({ options: { topologySupported: false } });
  deepStrictEqual(
    unsupported.kind === "persistentVolume" && "nodeAffinity" in unsupported.volume.spec,
    false,
  );
  const empty = build({ response: response({ accessible_topology: [] }) });
  deepStrictEqual(empty.kind === "persistentVolume" && "nodeAffinity" in empty.volume.spec, false);
});

Deno.test("buildPersistentVolume() labels only a PV confined to this node (every node's agent watches the others)", () => {
  const labelsOf = (outcome: PersistentVolumeOutcome) =>
    outcome.kind === "persistentVolume" ? outcome.volume.metadata.labels : "not built";
  deepStrictEqual(labelsOf(build()), nodeLabels(DRIVER, NODE));
  const zone = build({
    response: response({ accessible_topology: [{ segments: { zone: "z1" } }] }),
  });
  deepStrictEqual(labelsOf(zone), undefined, "a volume of the zone");
  const twoNodes = build({
    response: response({
      accessible_topology: [
        { segments: SEGMENT },
        { segments: { [TOPOLOGY_KEY]: "node-b" } },
      ],
    }),
  });
  deepStrictEqual(labelsOf(twoNodes), undefined, "a volume of two nodes");
  deepStrictEqual(labelsOf(build({ options: { topologySupported: false } })), undefined);
});

Deno.test("buildPersistentVolume() takes storageClassName from the beta annotation when present", () => {
  const theClaim = claim({
    metadata: {
      annotations: {
        "volume.kubernetes.io/storage-provisioner": DRIVER,
        "volume.beta.kubernetes.io/storage-class": "legacy",
      },
    },
    spec: { storageClassName: null },
  });
  const outcome = build({ claim: theClaim });
  deepStrictEqual(
    outcome.kind === "persistentVolume" && outcome.volume.spec.storageClassName,
    "legacy",
  );
});

Deno.test("buildPersistentVolume() retries a response without a volume ID instead of saving a broken PV", () => {
  const problem = {
    kind: "problem",
    reason: "ProvisioningFailed",
    message: `CreateVolume for ${VOLUME} returned no volume ID`,
    retry: "backoff",
    state: "inBackground",
  };
  deepStrictEqual(build({ response: response(null) }), problem);
  deepStrictEqual(build({ response: response({ volume_id: "" }) }), problem);
});
