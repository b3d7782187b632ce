/**
 * The secret annotations on a provisioned PV: the deletion secret (always
 * present, so the delete path need not consult the StorageClass again) and
 * the controller-modify secret (only when configured), read by
 * external-resizer's modifier.
 */
import {
  ANN_DELETION_SECRET_NAME,
  ANN_DELETION_SECRET_NAMESPACE,
  ANN_MODIFY_SECRET_NAME,
  ANN_MODIFY_SECRET_NAMESPACE,
} from "../model/keys.ts";
import type { SecretReference } from "../model/objects.ts";

/**
 * The deletion-secret annotations every provisioned PV carries: the
 * provisioner secret, or both values "" when there is none (which tells the
 * delete path not to fall back to the StorageClass).
 */
export function deletionSecretAnnotations(secret: SecretReference | null): Record<string, string> {
  return {
    [ANN_DELETION_SECRET_NAME]: secret?.name ?? "",
    [ANN_DELETION_SECRET_NAMESPACE]: secret?.namespace ?? "",
  };
}

/** The modify-secret annotations, only when the class names a controller-modify secret. */
export function modifySecretAnnotations(secret: SecretReference | null): Record<string, string> {
  if (secret === null) return {};
  return { [ANN_MODIFY_SECRET_NAME]: secret.name, [ANN_MODIFY_SECRET_NAMESPACE]: secret.namespace };
}

/**
 * The delete path's reading of the deletion-secret annotations: a secret to
 * read, no secret (both empty), or "legacy" (annotations absent: resolve the
 * provisioner secret from the current StorageClass instead).
 */
export function deletionSecretFromAnnotations(
  annotations: Record<string, string> | undefined,
): { kind: "annotated"; secret: SecretReference | null } | { kind: "legacy" } {
  const name = annotations?.[ANN_DELETION_SECRET_NAME];
  const namespace = annotations?.[ANN_DELETION_SECRET_NAMESPACE];
  if (name === undefined || namespace === undefined) return { kind: "legacy" };
  if (name === "" || namespace === "") return { kind: "annotated", secret: null };
  return { kind: "annotated", secret: { name, namespace } };
}
