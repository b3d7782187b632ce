/**
 * Evaluates node selector terms against a set of labels the way
 * k8s.io/component-helpers' MatchNodeSelectorTerms does for a Node: terms are
 * OR'ed, the expressions of a term AND'ed, empty terms match nothing, and
 * parse errors only surface when no term matched.
 *
 * Difference from upstream: the "node" here is the driver's topology
 * segment, which has no name. Upstream skips matchFields when the node has no
 * name, so a term with only matchFields would match every node (and every
 * agent would delete the volume). Here a term with matchFields never matches.
 */
import type { NodeSelectorTerm, SelectorRequirement } from "../model/objects.ts";

/** Whether some term matched, or why the terms could not be evaluated. */
type MatchResult = { ok: true; matches: boolean } | { ok: false; error: string };

const OPERATORS = ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"];

/** OR over the terms; errors of unparsable terms are reported only when nothing matched. */
export function matchNodeSelectorTerms(
  terms: readonly NodeSelectorTerm[],
  labels: Readonly<Record<string, string>>,
): MatchResult {
  const errors: string[] = [];
  for (const [index, term] of terms.entries()) {
    const expressions = term.matchExpressions ?? [];
    const fields = term.matchFields ?? [];
    if (expressions.length === 0 && fields.length === 0) continue; // an empty term selects nothing
    const path = `nodeSelectorTerms[${index}].matchExpressions`;
    const termErrors = expressions.flatMap((expression, position) =>
      validateRequirement(expression, `${path}[${position}]`)
    );
    if (termErrors.length > 0) {
      errors.push(...termErrors);
      continue;
    }
    if (fields.length > 0) continue; // no field of a nameless segment can match
    if (expressions.every((expression) => matchesRequirement(expression, labels))) {
      return { ok: true, matches: true };
    }
  }
  if (errors.length === 0) return { ok: true, matches: false };
  // Go's errors.NewAggregate: one error as is, several as "[a, b]".
  return { ok: false, error: errors.length === 1 ? errors[0] ?? "" : `[${errors.join(", ")}]` };
}

/** One requirement against the labels (the requirement is valid). */
function matchesRequirement(
  requirement: SelectorRequirement,
  labels: Readonly<Record<string, string>>,
): boolean {
  const has = Object.hasOwn(labels, requirement.key);
  const value = has ? labels[requirement.key] ?? "" : undefined;
  const values = requirement.values ?? [];
  switch (requirement.operator) {
    case "In":
      return value !== undefined && values.includes(value);
    case "NotIn":
      return value === undefined || !values.includes(value);
    case "Exists":
      return has;
    case "DoesNotExist":
      return !has;
    case "Gt":
    case "Lt": {
      const actual = value === undefined ? undefined : parseInt64(value);
      const bound = parseInt64(values[0] ?? "");
      if (actual === undefined || bound === undefined) return false;
      return requirement.operator === "Gt" ? actual > bound : actual < bound;
    }
    default:
      return false;
  }
}

/** The checks of labels.NewRequirement and the operator table, as field errors. */
function validateRequirement(requirement: SelectorRequirement, path: string): string[] {
  const values = requirement.values ?? [];
  const errors: string[] = [];
  if (!OPERATORS.includes(requirement.operator)) {
    const supported = OPERATORS.map((name) => JSON.stringify(name)).join(", ");
    return [
      `${path}.operator: Unsupported value: ${
        JSON.stringify(requirement.operator)
      }: supported values: ${supported}`,
    ];
  }
  if (!isQualifiedName(requirement.key)) {
    errors.push(
      `${path}.key: Invalid value: ${JSON.stringify(requirement.key)}: not a valid label key`,
    );
  }
  const op = requirement.operator;
  if ((op === "In" || op === "NotIn") && values.length === 0) {
    errors.push(
      `${path}.values: Required value: for 'in', 'notin' operators, values set can't be empty`,
    );
  }
  if ((op === "Exists" || op === "DoesNotExist") && values.length > 0) {
    errors.push(
      `${path}.values: Forbidden: values set must be empty for exists and does not exist`,
    );
  }
  if (
    (op === "Gt" || op === "Lt") &&
    (values.length !== 1 || parseInt64(values[0] ?? "") === undefined)
  ) {
    errors.push(
      `${path}.values: Invalid value: ${
        JSON.stringify(values)
      }: for 'Gt', 'Lt' operators, exactly one integer value is required`,
    );
  }
  for (const value of values) {
    if (!isLabelValue(value)) {
      errors.push(
        `${path}.values: Invalid value: ${JSON.stringify(value)}: not a valid label value`,
      );
    }
  }
  return errors;
}

const NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** A label key: `[prefix/]name`, prefix a DNS subdomain, name at most 63 characters. */
function isQualifiedName(key: string): boolean {
  const parts = key.split("/");
  if (parts.length > 2) return false;
  const name = parts.at(-1) ?? "";
  if (parts.length === 2) {
    const prefix = parts[0] ?? "";
    if (prefix.length === 0 || prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix)) return false;
  }
  return name.length <= 63 && NAME_PART.test(name);
}

/** Whether a Node could carry this label: a valid key and a valid value. */
export function isValidLabel(key: string, value: string): boolean {
  return isQualifiedName(key) && isLabelValue(value);
}

function isLabelValue(value: string): boolean {
  return value === "" || (value.length <= 63 && NAME_PART.test(value));
}

const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;

/** strconv.ParseInt(text, 10, 64). */
function parseInt64(text: string): bigint | undefined {
  if (!/^[+-]?\d+$/.test(text)) return undefined;
  const value = BigInt(text);
  return value < INT64_MIN || value > INT64_MAX ? undefined : value;
}
