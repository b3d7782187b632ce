/**
 * `prepareProvision`: everything upstream checks and computes before
 * CreateVolume, as one pure function. It returns the request (without the
 * secret's data, which the caller reads from the named Secret), the secret
 * references for the PV, and the fsType, or a problem to report, or the
 * "external populator" outcome. It reads nothing and writes nothing.
 */
import type {
  CreateVolumeRequest,
  Segments,
  TopologyRequirement,
  VolumeCapability,
} from "../../csi/types.ts";
import type {
  Claim,
  SecretReference,
  StorageClass,
  VolumeAttributesClass,
} from "../../model/objects.ts";
import { accessibilityRequirements } from "../../topology/requirements.ts";
import { volumeCapabilities } from "./capabilities.ts";
import {
  type ClaimSource,
  classifyDataSource,
  type ExternalPopulator,
} from "../source/classify.ts";
import { checkDriverCapabilities, type DriverCapabilities } from "./driver_capabilities.ts";
import type { SourceFacts } from "../source/checks.ts";
import { type PlannedSource, plannedSource } from "../source/plan.ts";
import { atClaim, atClass, deprecationWarning, parameterField } from "../../model/messages.ts";
import { makeVolumeName } from "./volume_name.ts";
import { type Problem, problem } from "../outcome.ts";
import {
  PREFIXED_FSTYPE_KEY,
  resolveFsType,
  stripReservedParameters,
  withExtraCreateMetadata,
} from "./parameters.ts";
import {
  type PvSecretReferences,
  resolvePvSecretReferences,
  resolveSecretReference,
} from "../../secrets/references.ts";
import { requiredBytes } from "./size.ts";
import { mutableParameters } from "./volume_attributes_class.ts";

/** The objects a provisioning attempt is about, from the informer caches. */
interface ProvisionInput {
  claim: Claim;
  /** The claim's class (decideClaim found it). */
  storageClass: StorageClass;
  /** The VolumeAttributesClass named by the claim, when the cache has it. */
  volumeAttributesClass?: VolumeAttributesClass | undefined;
  /** What was read about the claim's snapshot or clone source (source/load.ts). */
  source?: SourceFacts | undefined;
}

/** The flags and facts prepareProvision needs (a subset of Config plus the driver's answers). */
export interface ProvisionOptions {
  driverName: string;
  nodeName: string;
  volumeNamePrefix: string;
  volumeNameUuidLength: number;
  extraCreateMetadata: boolean;
  defaultFstype: string;
  strictTopology: boolean;
  /** VOLUME_ACCESSIBILITY_CONSTRAINTS and the Topology gate: without it, no requirements are sent. */
  topologySupported: boolean;
  /** NodeGetInfo accessible_topology.segments, null when the driver reported none. */
  segment: Segments | null;
  capabilities: DriverCapabilities;
  volumeAttributesClassEnabled: boolean;
  crossNamespaceVolumeDataSource: boolean;
  /** --prevent-volume-mode-conversion. */
  preventVolumeModeConversion: boolean;
}

/** Everything needed to call CreateVolume and, afterwards, to build the PV. */
export interface ProvisionPlan {
  kind: "plan";
  volumeName: string;
  requiredBytes: bigint;
  /** The request with `secrets: {}`: fill in the data of `provisionerSecret`. */
  request: CreateVolumeRequest;
  /** The Secret whose data goes into request.secrets (also recorded on the PV for deletion). */
  provisionerSecret: SecretReference | null;
  /** Secret references the PV carries. */
  pvSecrets: PvSecretReferences;
  /** Filesystem for mount volumes; the PV gets it only in Filesystem mode. */
  fsType: string;
  /** The claim's VolumeAttributesClass name when the gate is on. */
  volumeAttributesClassName: string | undefined;
  /** Deprecation warnings to log (deprecated parameter keys in the class). */
  warnings: string[];
  /** The snapshot or claim the volume is made from, with where it lives. */
  source: PlannedSource | undefined;
}

/** What prepareProvision decided. */
export type PrepareOutcome = ProvisionPlan | Problem | ExternalPopulator;

/** Checks the claim and class and builds the CreateVolume request. */
export function prepareProvision(input: ProvisionInput, options: ProvisionOptions): PrepareOutcome {
  const { claim } = input;
  const dataSource = classifyDataSource(claim, options);
  if (dataSource.kind === "problem" || dataSource.kind === "externalPopulator") return dataSource;
  const claimSource = dataSource.kind === "source" ? dataSource.source : undefined;
  const vacName = options.volumeAttributesClassEnabled && claim.spec.volumeAttributesClassName
    ? claim.spec.volumeAttributesClassName
    : undefined;
  const capabilities = capabilityProblem(input, { ...options, claimSource, vacName });
  if (capabilities !== undefined) return capabilities;
  if (claim.spec.selector !== undefined && claim.spec.selector !== null) {
    return problem(atClaim("claim Selector is not supported", claim, "spec.selector"));
  }
  const name = makeVolumeName(claim.metadata.uid, {
    prefix: options.volumeNamePrefix,
    uuidLength: options.volumeNameUuidLength,
  });
  if (!name.ok) return problem(name.error);
  const volume = volumeShape(input, options);
  if (volume.kind === "problem") return volume;
  const source = claimSource === undefined
    ? undefined
    : plannedSource(claimSource, { ...input, requestedBytes: volume.bytes }, options);
  if (source?.kind === "problem") return source;
  const requisites = topologyRequirements(input, options);
  if (requisites.kind === "problem") return requisites;
  const secrets = secretReferences(input, name.value);
  if (secrets.kind === "problem") return secrets;
  const parameters = driverParameters(input, { ...options, volumeName: name.value });
  if (parameters.kind === "problem") return parameters;
  const mutable = mutableParameters(input, { driverName: options.driverName, vacName });
  if (mutable.kind === "problem") return mutable;
  const request: CreateVolumeRequest = {
    name: name.value,
    capacity_range: { required_bytes: volume.bytes.toString() },
    volume_capabilities: volume.capabilities,
    parameters: parameters.value,
    secrets: {},
    ...(source === undefined ? {} : { volume_content_source: source.contentSource }),
    ...(requisites.value === null ? {} : { accessibility_requirements: requisites.value }),
    ...(mutable.value === undefined ? {} : { mutable_parameters: mutable.value }),
  };
  return {
    kind: "plan",
    volumeName: name.value,
    requiredBytes: volume.bytes,
    request,
    provisionerSecret: secrets.provisioner,
    pvSecrets: secrets.pv,
    fsType: volume.fsType,
    volumeAttributesClassName: vacName,
    warnings: [...volume.warnings, ...(source?.warnings ?? []), ...secrets.warnings],
    source,
  };
}

/** checkDriverCapabilities for what the claim asks: a restore, a clone, a VolumeAttributesClass. */
function capabilityProblem(
  input: ProvisionInput,
  options: ProvisionOptions & { claimSource: ClaimSource | undefined; vacName: string | undefined },
): Problem | undefined {
  const { claim } = input;
  const { claimSource, vacName } = options;
  const missing = checkDriverCapabilities(options.capabilities, {
    snapshot: claimSource?.kind === "snapshot",
    clone: claimSource?.kind === "clone",
    modifyVolume: vacName !== undefined,
  });
  if (missing === undefined) return undefined;
  switch (missing.requirement) {
    case "provisioning":
      return problem(missing.message);
    case "modifyVolume":
      return problem(atClaim(missing.message, claim, "spec.volumeAttributesClassName"));
    default:
      return problem(atClaim(missing.message, claim, claimSource!.field));
  }
}

type VolumeShape =
  | {
    kind: "shape";
    fsType: string;
    bytes: bigint;
    capabilities: VolumeCapability[];
    warnings: string[];
  }
  | Problem;

/** fsType, size and capabilities: the checks upstream makes in this order. */
function volumeShape(input: ProvisionInput, options: ProvisionOptions): VolumeShape {
  const { claim, storageClass } = input;
  const className = storageClass.metadata.name;
  const fsType = resolveFsType(storageClass.parameters, options);
  if (!fsType.ok) {
    return problem(atClass(fsType.error, className, fsType.keys.map(parameterField).join(" and ")));
  }
  const bytes = requiredBytes(claim);
  if (!bytes.ok) return problem(bytes.error);
  const accessModes = claim.spec.accessModes ?? [];
  if (accessModes.length === 0) {
    // Not upstream (which would send no capability at all); the API server requires a mode anyway.
    return problem(atClaim("claim has no access modes", claim, "spec.accessModes"));
  }
  const capabilities = volumeCapabilities(accessModes, {
    volumeMode: claim.spec.volumeMode,
    fsType: fsType.value,
    mountOptions: storageClass.mountOptions,
    singleNodeMultiWriter: options.capabilities.controller.includes("SINGLE_NODE_MULTI_WRITER"),
  });
  if (!capabilities.ok) {
    return problem(atClaim(capabilities.error, claim, `spec.accessModes: ${capabilities.mode}`));
  }
  const warnings = fsType.deprecatedKey === undefined
    ? []
    : [deprecationWarning(fsType.deprecatedKey, PREFIXED_FSTYPE_KEY)];
  return {
    kind: "shape",
    fsType: fsType.value,
    bytes: bytes.value,
    capabilities: capabilities.value,
    warnings,
  };
}

/** GenerateAccessibilityRequirements for this node; only when topology is supported. */
function topologyRequirements(
  input: ProvisionInput,
  options: ProvisionOptions,
): { kind: "requirements"; value: TopologyRequirement | null } | Problem {
  if (!options.topologySupported) return { kind: "requirements", value: null };
  const result = accessibilityRequirements({
    segment: options.segment,
    nodeName: options.nodeName,
    allowedTopologies: input.storageClass.allowedTopologies,
  }, options);
  if (result.ok) return { kind: "requirements", value: result.value };
  const message = `error generating accessibility requirements: ${result.error}`;
  const located = input.storageClass.allowedTopologies?.length
    ? atClass(message, input.storageClass.metadata.name, "allowedTopologies")
    : message;
  return problem(located, { state: "noChange" });
}

type Secrets =
  | {
    kind: "secrets";
    provisioner: SecretReference | null;
    pv: PvSecretReferences;
    warnings: string[];
  }
  | Problem;

/** The provisioner secret first, then the PV's, as upstream resolves them. */
function secretReferences(input: ProvisionInput, volumeName: string): Secrets {
  const { claim, storageClass } = input;
  const templateInput = {
    parameters: storageClass.parameters,
    className: storageClass.metadata.name,
    volumeName,
    claim: {
      name: claim.metadata.name,
      namespace: claim.metadata.namespace,
      annotations: claim.metadata.annotations,
    },
  };
  const provisioner = resolveSecretReference("provisioner", templateInput);
  if (!provisioner.ok) return problem(provisioner.error, { state: "noChange" });
  const pv = resolvePvSecretReferences(templateInput);
  if (!pv.ok) return problem(pv.error, { state: "noChange" });
  const warnings = [...new Set([...provisioner.warnings, ...pv.warnings])];
  return { kind: "secrets", provisioner: provisioner.value, pv: pv.value, warnings };
}

/** Stripped class parameters plus --extra-create-metadata. */
function driverParameters(
  input: ProvisionInput,
  options: ProvisionOptions & { volumeName: string },
): { kind: "parameters"; value: Record<string, string> } | Problem {
  const stripped = stripReservedParameters(input.storageClass.parameters);
  if (!stripped.ok) {
    return problem(
      atClass(stripped.error, input.storageClass.metadata.name, parameterField(stripped.key)),
    );
  }
  if (!options.extraCreateMetadata) return { kind: "parameters", value: stripped.value };
  const value = withExtraCreateMetadata(stripped.value, {
    claimName: input.claim.metadata.name,
    claimNamespace: input.claim.metadata.namespace,
    volumeName: options.volumeName,
  });
  return { kind: "parameters", value };
}
