/**
 * Owner references of the capacity objects (upstream's pkg/owner and
 * capacity.go), pure.
 * Upstream's references carry apiVersion, kind, name, uid and
 * `controller: true`, never blockOwnerDeletion (which would need delete
 * permission on the owner).
 */
import type { OwnerReference } from "../model/objects.ts";

/** A controller reference to the object. */
export function controllerReference(
  object: { apiVersion: string; kind: string; name: string; uid: string },
): OwnerReference {
  return {
    apiVersion: object.apiVersion,
    kind: object.kind,
    name: object.name,
    uid: object.uid,
    controller: true,
  };
}

/** The Node as owner (this agent's addition): the objects live and die with their node. */
export function nodeOwnerReference(node: { name: string; uid: string }): OwnerReference {
  return controllerReference({ apiVersion: "v1", kind: "Node", ...node });
}

/** The controlling owner among the references, if any (metav1.GetControllerOf). */
export function controllerOf(references: readonly OwnerReference[]): OwnerReference | undefined {
  return references.find((reference) => reference.controller === true);
}

/** Whether `owner` controls the object (upstream's isOwnedByUs: controller with the same UID). */
export function isControlledBy(
  references: readonly OwnerReference[] | undefined,
  owner: OwnerReference,
): boolean {
  return (references ?? []).some((reference) =>
    reference.controller === true && reference.uid === owner.uid
  );
}

/**
 * The references after making `owner` the controller. Upstream appends its
 * owner and keeps any other controller, which the API server refuses (only
 * one reference may be the controller) when, say, the owner level changed
 * from the DaemonSet to the Pod; here another controller is replaced, and
 * references that are not controllers are kept.
 */
export function withController(
  references: readonly OwnerReference[] | undefined,
  owner: OwnerReference,
): OwnerReference[] {
  const others = (references ?? []).filter((reference) =>
    reference.controller !== true && reference.uid !== owner.uid
  );
  return [...others, owner];
}

/** "apps/v1/DaemonSet csi-hostpathplugin" for logs and messages. */
export function describeOwner(owner: OwnerReference): string {
  return `${owner.apiVersion}/${owner.kind} ${owner.name}`;
}
