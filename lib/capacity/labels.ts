/**
 * Whether a node's segment and labels can be written as a CSIStorageCapacity
 * object's nodeTopology and labels (the label values themselves are in
 * lib/model/labels.ts).
 */
import { LABEL_MAX_LENGTH } from "../model/labels.ts";

/** validation.IsValidLabelValue: empty, or alphanumeric at both ends with '-', '_', '.' between. */
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Why `value` cannot be a label value, if it cannot (the API server answers 422). */
function labelValueProblem(value: string): string | undefined {
  if (value.length > LABEL_MAX_LENGTH) {
    return `is ${value.length} characters long, a label value is at most ${LABEL_MAX_LENGTH}`;
  }
  if (!LABEL_VALUE.test(value)) {
    return "is not a label value (letters, digits, '-', '_' and '.', starting and ending with a letter or digit)";
  }
  return undefined;
}

/** Why `key` cannot be a label key (validation.IsQualifiedName), if it cannot. */
function labelKeyProblem(key: string): string | undefined {
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
