/**
 * The two labels that mark a CSIStorageCapacity object as this agent's, and
 * the label selector its informer watches with. The managed-by value is
 * upstream's, to the character (cmd/csi-provisioner/util.go
 * getNameWithMaxLength), so that objects written by upstream's sidecar on a
 * node are adopted by this agent and the other way round.
 */
import { DRIVER_NAME_LABEL, MANAGED_BY_LABEL } from "../model/keys.ts";

/** The managed-by value of upstream's central mode, and the base of the node-mode value. */
export const MANAGED_BY_BASE = "external-provisioner";

/** validation.DNS1035LabelMaxLength: the longest label value upstream allows itself. */
const LABEL_MAX_LENGTH = 63;

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

/** Both labels of this node's objects. */
export function capacityLabels(
  driverName: string,
  nodeName: string,
): Record<string, string> {
  return { [DRIVER_NAME_LABEL]: driverName, [MANAGED_BY_LABEL]: managedByLabel(nodeName) };
}

/** `k1=v1,k2=v2` in key order, as labels.Set.AsSelector().String() prints it. */
export function labelSelector(labels: Record<string, string>): string {
  return Object.keys(labels).sort().map((key) => `${key}=${labels[key]}`).join(",");
}

/** validation.IsValidLabelValue: empty, or alphanumeric at both ends with '-', '_', '.' between. */
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Why `value` cannot be a label value, if it cannot (the API server answers 422). */
export function labelValueProblem(value: string): string | undefined {
  if (value.length > LABEL_MAX_LENGTH) {
    return `is ${value.length} characters long, a label value is at most ${LABEL_MAX_LENGTH}`;
  }
  if (!LABEL_VALUE.test(value)) {
    return "is not a label value (letters, digits, '-', '_' and '.', starting and ending with a letter or digit)";
  }
  return undefined;
}

/** Why `key` cannot be a label key (validation.IsQualifiedName), if it cannot. */
export function labelKeyProblem(key: string): string | undefined {
  const slash = key.lastIndexOf("/");
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  const name = key.slice(slash + 1);
  if (prefix !== undefined && (prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix))) {
    return "has a prefix that is not a DNS subdomain";
  }
  if (name.length > LABEL_MAX_LENGTH || !LABEL_NAME.test(name)) {
    return `has a name that is not a label name (at most ${LABEL_MAX_LENGTH} letters, digits, '-', '_' and '.', starting and ending with a letter or digit)`;
  }
  return undefined;
}

/** Shortens what is quoted in a message. */
function quoted(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}...` : text);
}

/**
 * Every reason the segment cannot be written as CSIStorageCapacity
 * nodeTopology.matchLabels (nor the labels as the objects' labels): each would
 * make every create of an object fail with 422, forever.
 */
export function capacityLabelProblems(
  segment: Record<string, string>,
  labels: Record<string, string>,
): string[] {
  const problems: string[] = [];
  for (const [key, value] of Object.entries(segment)) {
    const keyProblem = labelKeyProblem(key);
    if (keyProblem !== undefined) problems.push(`topology key ${quoted(key)} ${keyProblem}`);
    const valueProblem = labelValueProblem(value);
    if (valueProblem !== undefined) {
      problems.push(`the value of topology key ${quoted(key)}, ${quoted(value)}, ${valueProblem}`);
    }
  }
  for (const [key, value] of Object.entries(labels)) {
    const valueProblem = labelValueProblem(value);
    if (valueProblem !== undefined) problems.push(`label ${key}=${quoted(value)} ${valueProblem}`);
  }
  return problems;
}
