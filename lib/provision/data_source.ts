/**
 * The claim's data source (`spec.dataSource`, else `spec.dataSourceRef`), as
 * upstream's prepareProvision normalizes and classifies it. This agent does
 * not restore snapshots or clone volumes yet: such claims get a problem that
 * says so, instead of a CreateVolume without content.
 */
import type { Claim, DataSourceReference } from "../model/objects.ts";
import { atClaim } from "../model/messages.ts";
import { type Problem, problem } from "./outcome.ts";

/** The API group a VolumeSnapshot data source must have. */
export const SNAPSHOT_API_GROUP = "snapshot.storage.k8s.io";

/** The Normal event upstream emits before leaving a claim to a volume populator. */
export const EXTERNAL_POPULATOR_EVENT = {
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

/** What to do about the claim's data source. */
export type DataSourceOutcome =
  /** No data source: provision an empty volume. */
  | { kind: "none" }
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
  if (fromRef && (source.namespace ?? "") !== "" && !options.crossNamespaceVolumeDataSource) {
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
  if (source.kind === "VolumeSnapshot" || source.kind === "PersistentVolumeClaim") {
    // Not upstream: until restore and clone exist, refuse clearly. The slow
    // retry fits, since only an upgrade (or a new claim) can change the answer.
    const what = source.kind === "VolumeSnapshot"
      ? "restore VolumeSnapshot"
      : "clone PersistentVolumeClaim";
    const message = `cannot ${what} ${JSON.stringify(source.name)}: ` +
      "snapshots and clones come in a later version of csi-node-provisioner";
    return problem(atClaim(message, claim, field), { retry: "slow" });
  }
  return {
    kind: "externalPopulator",
    event: EXTERNAL_POPULATOR_EVENT,
    reason: `data source (${source.kind}) is not handled by the provisioner, ` +
      "assuming an external populator will provision it",
  };
}
