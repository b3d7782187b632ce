/**
 * The claim's data source (`spec.dataSource`, else `spec.dataSourceRef`), as
 * upstream's prepareProvision normalizes and classifies it
 * (external-provisioner pkg/controller/controller.go, `dataSource` and the
 * kind switch): a VolumeSnapshot to restore, a claim to clone, or another
 * kind left to its volume populator.
 */
import type { Claim, DataSourceReference } from "../../model/objects.ts";
import { SNAPSHOT_API_GROUP } from "../../model/keys.ts";
import { atClaim } from "../../model/messages.ts";
import { type Problem, problem } from "../outcome.ts";

export { SNAPSHOT_API_GROUP };

/** The Normal event upstream emits before leaving a claim to a volume populator. */
const EXTERNAL_POPULATOR_EVENT = {
  type: "Normal",
  reason: "Provisioning",
  message: "Assuming an external populator will provision the volume",
} as const;

/**
 * A data source kind this provisioner does not handle: emit `event` on the
 * claim, then ignore it (no requeue); `reason` is upstream's IgnoredError
 * text for the log.
 */
export interface ExternalPopulator {
  kind: "externalPopulator";
  event: typeof EXTERNAL_POPULATOR_EVENT;
  reason: string;
}

/** A VolumeSnapshot to restore or a claim to clone, in the claim's namespace. */
export interface ClaimSource {
  kind: "snapshot" | "clone";
  namespace: string;
  name: string;
  /** Where the claim names it, for messages. */
  field: "spec.dataSource" | "spec.dataSourceRef";
}

/** What to do about the claim's data source. */
type DataSourceOutcome =
  /** No data source: provision an empty volume. */
  | { kind: "none" }
  | { kind: "source"; source: ClaimSource }
  | ExternalPopulator
  | Problem;

/** Classifies the data source; the gate is --feature-gates=CrossNamespaceVolumeDataSource. */
export function classifyDataSource(
  claim: Claim,
  options: { crossNamespaceVolumeDataSource: boolean },
): DataSourceOutcome {
  // Informer copies may carry null for an absent field.
  const fromRef = (claim.spec.dataSource ?? undefined) === undefined;
  const source: DataSourceReference | undefined = claim.spec.dataSource ??
    claim.spec.dataSourceRef ??
    undefined;
  if (source === undefined) return { kind: "none" };
  const field = fromRef ? "spec.dataSourceRef" : "spec.dataSource";
  const namespace = fromRef ? source.namespace ?? "" : "";
  if (namespace !== "" && !options.crossNamespaceVolumeDataSource) {
    return problem(atClaim(
      "dataSourceRef namespace specified but the CrossNamespaceVolumeDataSource feature is disabled",
      claim,
      `${field}.namespace`,
    ));
  }
  if (source.name === "") {
    return problem(
      atClaim(`the PVC source not found for PVC ${claim.metadata.name}`, claim, `${field}.name`),
    );
  }
  if (source.kind === "VolumeSnapshot" && (source.apiGroup ?? "") !== SNAPSHOT_API_GROUP) {
    const message = "the PVC source does not belong to the right APIGroup. " +
      `Expected ${SNAPSHOT_API_GROUP}, Got ${source.apiGroup ?? ""}`;
    return problem(atClaim(message, claim, `${field}.apiGroup`));
  }
  if (source.kind !== "VolumeSnapshot" && source.kind !== "PersistentVolumeClaim") {
    return {
      kind: "externalPopulator",
      event: EXTERNAL_POPULATOR_EVENT,
      reason: `data source (${source.kind}) is not handled by the provisioner, ` +
        "assuming an external populator will provision it",
    };
  }
  if (namespace !== "" && namespace !== claim.metadata.namespace) {
    // Upstream reads ReferenceGrants (gateway.networking.k8s.io) for these;
    // this agent does not watch them, so it refuses instead of guessing.
    const message = `cannot use ${source.kind} ${JSON.stringify(`${namespace}/${source.name}`)} ` +
      "of another namespace: csi-node-provisioner does not read ReferenceGrants, so it restores " +
      "and clones only within the claim's namespace";
    return problem(atClaim(message, claim, `${field}.namespace`), { retry: "slow" });
  }
  return {
    kind: "source",
    source: {
      kind: source.kind === "VolumeSnapshot" ? "snapshot" : "clone",
      namespace: claim.metadata.namespace,
      name: source.name,
      field,
    },
  };
}
