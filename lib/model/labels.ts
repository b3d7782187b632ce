/**
 * The labels that mark an object as the one of a driver's agent on a node:
 * its CSIStorageCapacity objects and the PVs it provisions, and the label
 * selectors its informers watch with. The managed-by value is upstream's, to
 * the character (cmd/csi-provisioner/util.go getNameWithMaxLength), so that
 * capacity objects written by upstream's sidecar on a node are adopted by
 * this agent and the other way round.
 */
import { DRIVER_NAME_LABEL, MANAGED_BY_LABEL } from "./keys.ts";

/** The managed-by value of upstream's central mode, and the base of the node-mode value. */
export const MANAGED_BY_BASE = "external-provisioner";

/** validation.DNS1035LabelMaxLength: the longest label value upstream allows itself. */
export const LABEL_MAX_LENGTH = 63;

/** FNV-1a, 32 bits, over the UTF-8 bytes, as 8 lowercase hex digits (Go's fnv.New32a + %08x). */
export function fnv32a(text: string): string {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}

/**
 * `base-suffix` if it fits in `maxLength`; else `base[:n]-hash(base)-suffix`
 * when the suffix leaves room; else `base-hash(base-suffix)`, cut to
 * `maxLength`. Lengths count bytes, as Go's len() does (names are ASCII).
 */
export function nameWithMaxLength(base: string, suffix: string, maxLength: number): string {
  const name = base === "" ? suffix : `${base}-${suffix}`;
  if (name.length <= maxLength) return name;
  const baseLength = maxLength - 10 - suffix.length; // 10 = "-" + 8 hex digits + "-"
  if (baseLength <= 0) {
    const prefix = base.slice(0, Math.max(0, maxLength - 9));
    const short = prefix === "" ? fnv32a(name) : `${prefix}-${fnv32a(name)}`;
    return short.slice(0, maxLength);
  }
  return `${base.slice(0, baseLength)}-${fnv32a(base)}-${suffix}`;
}

/** The managed-by label value of the agent on `nodeName` (node mode). */
export function managedByLabel(nodeName: string): string {
  return nameWithMaxLength(MANAGED_BY_BASE, nodeName, LABEL_MAX_LENGTH);
}

/** Both labels of the objects of `driverName`'s agent on `nodeName`. */
export function nodeLabels(driverName: string, nodeName: string): Record<string, string> {
  return { [DRIVER_NAME_LABEL]: driverName, [MANAGED_BY_LABEL]: managedByLabel(nodeName) };
}

/** `k1=v1,k2=v2` in key order, as labels.Set.AsSelector().String() prints it. */
export function labelSelector(labels: Record<string, string>): string {
  return Object.keys(labels).sort().map((key) => `${key}=${labels[key]}`).join(",");
}

/** The selector of objects that no node's agent labelled as its own. */
export const UNLABELLED_SELECTOR = `!${MANAGED_BY_LABEL}`;
