import { deepStrictEqual } from "node:assert/strict";
import type { Claim, StorageClass, VolumeAttributesClass } from "../../model/objects.ts";
import type { ProvisioningState, Retry } from "../outcome.ts";
import { type PrepareOutcome, prepareProvision, type ProvisionOptions } from "./request.ts";
import {
  claim,
  DRIVER,
  provisionOptions,
  storageClass,
  TOPOLOGY_KEY,
  volumeAttributesClass,
} from "../../../tests/builders/provision.ts";

const AT_CLAIM = '(PersistentVolumeClaim "apps/data"';
const AT_CLASS = '(StorageClass "fast"';

const CAN_MODIFY: Partial<ProvisionOptions> = {
  capabilities: { controllerService: true, controller: ["CREATE_DELETE_VOLUME", "MODIFY_VOLUME"] },
};

function prepare(overrides: {
  claim?: Claim;
  storageClass?: StorageClass;
  volumeAttributesClass?: VolumeAttributesClass;
  options?: Partial<ProvisionOptions>;
}): PrepareOutcome {
  return prepareProvision(
    {
      claim: overrides.claim ?? claim(),
      storageClass: overrides.storageClass ?? storageClass(),
      volumeAttributesClass: overrides.volumeAttributesClass ?? volumeAttributesClass(),
    },
    provisionOptions(overrides.options),
  );
}

type BadCase = {
  name: string;
  claim?: Claim;
  storageClass?: StorageClass;
  volumeAttributesClass?: VolumeAttributesClass;
  options?: Partial<ProvisionOptions>;
  message: string;
  state?: ProvisioningState;
  retry?: Retry;
};

const SIZE = "spec.resources.requests.storage)";

const BAD_INPUTS: BadCase[] = [
  {
    name: "unknown reserved parameter key",
    storageClass: storageClass({ parameters: { "csi.storage.k8s.io/foo": "bar" } }),
    message: "failed to strip CSI Parameters of prefixed keys: found unknown parameter key " +
      `"csi.storage.k8s.io/foo" with reserved namespace csi.storage.k8s.io/ ${AT_CLASS}, parameters["csi.storage.k8s.io/foo"])`,
  },
  {
    name: "both fstype keys",
    storageClass: storageClass({
      parameters: { fstype: "ext4", "csi.storage.k8s.io/fstype": "xfs" },
    }),
    message:
      'fstype specified in parameters with both "fstype" and "csi.storage.k8s.io/fstype" keys ' +
      `${AT_CLASS}, parameters["csi.storage.k8s.io/fstype"] and parameters["fstype"])`,
  },
  {
    name: "secret template with an unknown token",
    storageClass: storageClass({
      parameters: {
        "csi.storage.k8s.io/provisioner-secret-name": "${pvc.label}",
        "csi.storage.k8s.io/provisioner-secret-namespace": "vault",
      },
    }),
    message: `error resolving value "\${pvc.label}": invalid tokens: ["pvc.label"] ` +
      `${AT_CLASS}, parameters["csi.storage.k8s.io/provisioner-secret-name"])`,
    state: "noChange",
  },
  {
    name: "secret name without namespace",
    storageClass: storageClass({
      parameters: { "csi.storage.k8s.io/node-publish-secret-name": "s" },
    }),
    message:
      "failed to get name and namespace template from params: either name and namespace for " +
      `NodePublish secrets specified, Both must be specified ${AT_CLASS}, ` +
      'parameters["csi.storage.k8s.io/node-publish-secret-name"])',
    state: "noChange",
  },
  {
    name: "deprecated and new secret keys together",
    storageClass: storageClass({
      parameters: {
        csiProvisionerSecretNamespace: "a",
        "csi.storage.k8s.io/provisioner-secret-name": "s",
        "csi.storage.k8s.io/provisioner-secret-namespace": "b",
      },
    }),
    message:
      "failed to get name and namespace template from params: Provisioner secrets specified in " +
      `parameters with both "csi" and "csi.storage.k8s.io/" keys ${AT_CLASS}, ` +
      // Only the doubled namespace keys: the single name key is not at fault.
      'parameters["csiProvisionerSecretNamespace"] ' +
      'and parameters["csi.storage.k8s.io/provisioner-secret-namespace"])',
    state: "noChange",
  },
  {
    name: "secret namespace that is not a DNS-1123 label",
    storageClass: storageClass({
      parameters: {
        "csi.storage.k8s.io/secret-name": "s",
        "csi.storage.k8s.io/secret-namespace": "My_NS",
      },
    }),
    message:
      `"My_NS" is not a valid namespace name ${AT_CLASS}, parameters["csi.storage.k8s.io/secret-namespace"])`,
    state: "noChange",
  },
  {
    name: "zero size",
    claim: claim({ spec: { resources: { requests: { storage: "0" } } } }),
    message: `storage request "0" must be greater than zero ${AT_CLAIM}, ${SIZE}`,
  },
  {
    name: "negative size",
    claim: claim({ spec: { resources: { requests: { storage: "-1Gi" } } } }),
    message: `storage request "-1Gi" must be greater than zero ${AT_CLAIM}, ${SIZE}`,
  },
  {
    name: "size beyond int64",
    claim: claim({ spec: { resources: { requests: { storage: "8Ei" } } } }),
    message:
      'storage request "8Ei" is 9223372036854775808 bytes, more than the largest size CSI can carry ' +
      `(9223372036854775807 bytes) ${AT_CLAIM}, ${SIZE}`,
  },
  {
    name: "malformed size",
    claim: claim({ spec: { resources: { requests: { storage: "ten gigs" } } } }),
    message: `invalid storage request "ten gigs": quantities must match the regular expression ` +
      `'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' ${AT_CLAIM}, ${SIZE}`,
  },
  {
    name: "missing size",
    claim: claim({ spec: { resources: {} } }),
    message: `claim has no storage request ${AT_CLAIM}, ${SIZE}`,
  },
  {
    name: "allowedTopologies without this node, strict",
    storageClass: storageClass({
      allowedTopologies: [{ matchLabelExpressions: [{ key: TOPOLOGY_KEY, values: ["node-b"] }] }],
    }),
    options: { strictTopology: true },
    message: `error generating accessibility requirements: selected node '"node-a"' topology ` +
      `'[{${TOPOLOGY_KEY} node-a}]' is not in allowed topologies: [[{${TOPOLOGY_KEY} node-b}]] ` +
      `${AT_CLASS}, allowedTopologies)`,
    state: "noChange",
  },
  {
    name: "allowedTopologies without this node, not strict",
    storageClass: storageClass({
      allowedTopologies: [{ matchLabelExpressions: [{ key: TOPOLOGY_KEY, values: ["node-b"] }] }],
    }),
    message:
      `error generating accessibility requirements: topology [{${TOPOLOGY_KEY} node-a}] from ` +
      `selected node "node-a" is not in requisite: [[{${TOPOLOGY_KEY} node-b}]] ${AT_CLASS}, allowedTopologies)`,
    state: "noChange",
  },
  {
    name: "driver without topology for this node",
    options: { segment: {} },
    message: "error generating accessibility requirements: no topology key found for node node-a",
    state: "noChange",
  },
  {
    name: "selector set",
    claim: claim({ spec: { selector: { matchLabels: { tier: "gold" } } } }),
    message: `claim Selector is not supported ${AT_CLAIM}, spec.selector)`,
  },
  {
    name: "snapshot data source, driver without CREATE_DELETE_SNAPSHOT",
    claim: claim({
      spec: {
        dataSource: { apiGroup: "snapshot.storage.k8s.io", kind: "VolumeSnapshot", name: "snap-1" },
      },
    }),
    message: "CSI driver does not support snapshot restore: controller CREATE_DELETE_SNAPSHOT " +
      `capability is not reported ${AT_CLAIM}, spec.dataSource)`,
  },
  {
    name: "clone data source through dataSourceRef, driver without CLONE_VOLUME",
    claim: claim({ spec: { dataSourceRef: { kind: "PersistentVolumeClaim", name: "origin" } } }),
    message: "CSI driver does not support clone operations: controller CLONE_VOLUME capability " +
      `is not reported ${AT_CLAIM}, spec.dataSourceRef)`,
  },
  {
    name: "clone data source of another namespace (gate on)",
    claim: claim({
      spec: {
        dataSourceRef: { kind: "PersistentVolumeClaim", name: "origin", namespace: "other" },
      },
    }),
    options: { crossNamespaceVolumeDataSource: true },
    message: 'cannot use PersistentVolumeClaim "other/origin" of another namespace: ' +
      "csi-node-provisioner does not read ReferenceGrants, so it restores and clones only within " +
      `the claim's namespace ${AT_CLAIM}, spec.dataSourceRef.namespace)`,
    retry: "slow",
  },
  {
    name: "snapshot of the wrong API group",
    claim: claim({
      spec: { dataSource: { apiGroup: "example.com", kind: "VolumeSnapshot", name: "s" } },
    }),
    message:
      "the PVC source does not belong to the right APIGroup. Expected snapshot.storage.k8s.io, " +
      `Got example.com ${AT_CLAIM}, spec.dataSource.apiGroup)`,
  },
  {
    name: "data source without a name",
    claim: claim({ spec: { dataSource: { kind: "PersistentVolumeClaim", name: "" } } }),
    message: `the PVC source not found for PVC data ${AT_CLAIM}, spec.dataSource.name)`,
  },
  {
    name: "cross-namespace dataSourceRef with the gate off",
    claim: claim({ spec: { dataSourceRef: { kind: "Backup", name: "b", namespace: "other" } } }),
    message:
      "dataSourceRef namespace specified but the CrossNamespaceVolumeDataSource feature is disabled " +
      `${AT_CLAIM}, spec.dataSourceRef.namespace)`,
  },
  {
    name: "VolumeAttributesClass of another driver",
    claim: claim({ spec: { volumeAttributesClassName: "gold" } }),
    volumeAttributesClass: volumeAttributesClass({ driverName: "other.csi.example.com" }),
    options: CAN_MODIFY,
    message:
      "VAC gold referenced in PVC is for driver other.csi.example.com which does not match driver " +
      `name ${DRIVER} ${AT_CLAIM}, spec.volumeAttributesClassName)`,
  },
  {
    name: "missing VolumeAttributesClass",
    claim: claim({ spec: { volumeAttributesClassName: "platinum" } }),
    options: CAN_MODIFY,
    message:
      `volumeattributesclasses.storage.k8s.io "platinum" not found ${AT_CLAIM}, spec.volumeAttributesClassName)`,
    state: "noChange",
  },
  {
    name: "VolumeAttributesClass with a driver that cannot modify volumes",
    claim: claim({ spec: { volumeAttributesClassName: "gold" } }),
    message:
      "CSI driver does not support VolumeAttributesClass: controller MODIFY_VOLUME capability is not " +
      `reported ${AT_CLAIM}, spec.volumeAttributesClassName)`,
  },
  {
    name: "driver without CREATE_DELETE_VOLUME",
    options: { capabilities: { controllerService: true, controller: [] } },
    message:
      "CSI driver does not support dynamic provisioning: controller CREATE_DELETE_VOLUME capability is not reported",
  },
  {
    name: "driver without the controller service",
    options: { capabilities: { controllerService: false, controller: ["CREATE_DELETE_VOLUME"] } },
    message:
      "CSI driver does not support dynamic provisioning: plugin CONTROLLER_SERVICE capability is not reported",
  },
  {
    name: "empty volume name prefix",
    options: { volumeNamePrefix: "" },
    message: "volume name prefix cannot be of length 0",
  },
  {
    name: "unknown access mode",
    claim: claim({ spec: { accessModes: ["ReadWriteSometimes"] } }),
    message:
      `unsupported AccessMode combination: [ReadWriteSometimes] ${AT_CLAIM}, spec.accessModes: ReadWriteSometimes)`,
  },
  {
    name: "no access modes",
    claim: claim({ spec: { accessModes: [] } }),
    message: `claim has no access modes ${AT_CLAIM}, spec.accessModes)`,
  },
];

Deno.test("prepareProvision() refuses bad claims and classes with a located message", () => {
  deepStrictEqual(BAD_INPUTS.length >= 15, true);
  for (const bad of BAD_INPUTS) {
    deepStrictEqual(
      prepare(bad),
      {
        kind: "problem",
        reason: "ProvisioningFailed",
        message: bad.message,
        retry: bad.retry ?? "backoff",
        state: bad.state ?? "finished",
      },
      bad.name,
    );
  }
});
