/**
 * The StorageClass name of a claim, as `util.GetPersistentVolumeClaimClass`
 * reads it: the beta annotation `volume.beta.kubernetes.io/storage-class`
 * wins over `spec.storageClassName`.
 */
import { ANN_BETA_STORAGE_CLASS } from "./keys.ts";
import type { Claim } from "./objects.ts";

/** The claim's class name, "" when it names none. */
export function claimStorageClassName(claim: Claim): string {
  const annotated = claim.metadata.annotations?.[ANN_BETA_STORAGE_CLASS];
  if (annotated !== undefined) return annotated;
  // Upstream's checkNode dereferences spec.storageClassName without a nil
  // check and panics for claims that use only the annotation; "" here.
  return claim.spec.storageClassName ?? "";
}
