import { deepStrictEqual } from "node:assert/strict";
import type { Claim, StorageClass } from "../../model/objects.ts";
import { type PrepareOutcome, prepareProvision, type ProvisionOptions } from "./request.ts";
import {
  claim,
  CLAIM_UID,
  NO_PV_SECRETS,
  provisionOptions,
  SEGMENT,
  storageClass,
  volumeAttributesClass,
} from "../../../tests/builders/provision.ts";

const VOLUME = `pvc-${CLAIM_UID}`;
const OWN = { segments: SEGMENT };

function prepare(
  overrides: { claim?: Claim; storageClass?: StorageClass; options?: Partial<ProvisionOptions> } =
    {},
): PrepareOutcome {
  return prepareProvision(
    {
      claim: overrides.claim ?? claim(),
      storageClass: overrides.storageClass ?? storageClass(),
      volumeAttributesClass: volumeAttributesClass(),
    },
    provisionOptions(overrides.options),
  );
}

Deno.test("prepareProvision() builds the CreateVolume request for a plain claim", () => {
  deepStrictEqual(prepare(), {
    kind: "plan",
    volumeName: VOLUME,
    requiredBytes: 1n << 30n,
    request: {
      name: VOLUME,
      capacity_range: { required_bytes: "1073741824" },
      volume_capabilities: [{
        mount: { fs_type: "", mount_flags: [] },
        access_mode: { mode: "SINGLE_NODE_WRITER" },
      }],
      parameters: {},
      secrets: {},
      accessibility_requirements: { requisite: [OWN], preferred: [OWN] },
    },
    provisionerSecret: null,
    pvSecrets: NO_PV_SECRETS,
    fsType: "",
    volumeAttributesClassName: undefined,
    warnings: [],
    source: undefined,
  });
});

Deno.test("prepareProvision() strips reserved keys, adds --extra-create-metadata and resolves secrets", () => {
  const plan = prepare({
    storageClass: storageClass({
      parameters: {
        kind: "fast",
        "csi.storage.k8s.io/fstype": "xfs",
        "csi.storage.k8s.io/provisioner-secret-name": "${pvc.name}-creds",
        "csi.storage.k8s.io/provisioner-secret-namespace": "${pvc.namespace}",
        "csi.storage.k8s.io/node-stage-secret-name": "stage",
        "csi.storage.k8s.io/node-stage-secret-namespace": "vault",
      },
      mountOptions: ["noatime"],
    }),
    options: { extraCreateMetadata: true, defaultFstype: "ext4" },
  });
  if (plan.kind !== "plan") throw new Error(JSON.stringify(plan));
  deepStrictEqual(plan.request.parameters, {
    kind: "fast",
    "csi.storage.k8s.io/pvc/name": "data",
    "csi.storage.k8s.io/pvc/namespace": "apps",
    "csi.storage.k8s.io/pv/name": VOLUME,
  });
  deepStrictEqual(plan.request.volume_capabilities, [{
    mount: { fs_type: "xfs", mount_flags: ["noatime"] },
    access_mode: { mode: "SINGLE_NODE_WRITER" },
  }]);
  deepStrictEqual(plan.provisionerSecret, { name: "data-creds", namespace: "apps" });
  deepStrictEqual(plan.pvSecrets, {
    ...NO_PV_SECRETS,
    nodeStage: { name: "stage", namespace: "vault" },
  });
  deepStrictEqual(plan.request.secrets, {}, "secret data is the caller's to fill in");
  deepStrictEqual(plan.fsType, "xfs");
});

Deno.test("prepareProvision() uses --default-fstype and warns about the deprecated fstype key", () => {
  const byDefault = prepare({ options: { defaultFstype: "ext4" } });
  deepStrictEqual(byDefault.kind === "plan" && byDefault.fsType, "ext4");
  const deprecated = prepare({ storageClass: storageClass({ parameters: { fstype: "ext3" } }) });
  if (deprecated.kind !== "plan") throw new Error(JSON.stringify(deprecated));
  deepStrictEqual(deprecated.fsType, "ext3");
  deepStrictEqual(
    deprecated.request.parameters,
    { fstype: "ext3" },
    "deprecated keys are not stripped",
  );
  deepStrictEqual(deprecated.warnings, [
    '"fstype" is deprecated and will be removed in a future release, please use "csi.storage.k8s.io/fstype" instead',
  ]);
});

Deno.test("prepareProvision() gives Block claims block access and ignores their fsType, like upstream", () => {
  const plan = prepare({
    claim: claim({ spec: { volumeMode: "Block", accessModes: ["ReadWriteOnce", "ReadOnlyMany"] } }),
    storageClass: storageClass({ parameters: { "csi.storage.k8s.io/fstype": "ext4" } }),
  });
  if (plan.kind !== "plan") throw new Error(JSON.stringify(plan));
  deepStrictEqual(plan.request.volume_capabilities, [
    { block: {}, access_mode: { mode: "SINGLE_NODE_WRITER" } },
    { block: {}, access_mode: { mode: "MULTI_NODE_READER_ONLY" } },
  ]);
});

Deno.test("prepareProvision() maps access modes with SINGLE_NODE_MULTI_WRITER when the driver has it", () => {
  const plan = prepare({
    claim: claim({ spec: { accessModes: ["ReadWriteOncePod"] } }),
    options: {
      capabilities: {
        controllerService: true,
        controller: ["CREATE_DELETE_VOLUME", "SINGLE_NODE_MULTI_WRITER"],
      },
    },
  });
  deepStrictEqual(
    plan.kind === "plan" && plan.request.volume_capabilities[0]?.access_mode,
    { mode: "SINGLE_NODE_SINGLE_WRITER" },
  );
});

Deno.test("prepareProvision() sends no accessibility requirements when topology is not supported", () => {
  const plan = prepare({ options: { topologySupported: false, segment: null } });
  deepStrictEqual(plan.kind === "plan" && "accessibility_requirements" in plan.request, false);
});

Deno.test("prepareProvision() takes mutable_parameters from the claim's VolumeAttributesClass", () => {
  const vacClaim = claim({ spec: { volumeAttributesClassName: "gold" } });
  const options = {
    capabilities: {
      controllerService: true,
      controller: ["CREATE_DELETE_VOLUME", "MODIFY_VOLUME"] as const,
    },
  };
  const plan = prepare({ claim: vacClaim, options });
  if (plan.kind !== "plan") throw new Error(JSON.stringify(plan));
  deepStrictEqual(plan.request.mutable_parameters, { iops: "5000" });
  deepStrictEqual(plan.volumeAttributesClassName, "gold");
  const gateOff = prepare({
    claim: vacClaim,
    options: { ...options, volumeAttributesClassEnabled: false },
  });
  deepStrictEqual(
    gateOff.kind === "plan" &&
      [gateOff.volumeAttributesClassName, gateOff.request.mutable_parameters],
    [
      undefined,
      undefined,
    ],
  );
});

Deno.test("prepareProvision() leaves claims with another data source to an external populator", () => {
  const populated = claim({
    spec: { dataSourceRef: { apiGroup: "populator.example.com", kind: "Backup", name: "nightly" } },
  });
  deepStrictEqual(prepare({ claim: populated }), {
    kind: "externalPopulator",
    event: {
      type: "Normal",
      reason: "Provisioning",
      message: "Assuming an external populator will provision the volume",
    },
    reason:
      "data source (Backup) is not handled by the provisioner, assuming an external populator will provision it",
  });
});
