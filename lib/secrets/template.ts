/**
 * Template expansion for secret names and namespaces in StorageClass
 * parameters (`${pvc.namespace}`, `$pv.name`…), a port of Go's `os.Expand`
 * so that odd templates resolve exactly as they do upstream, plus the
 * DNS-1123 name checks the results must pass.
 */

/** The expanded text, or every token that had no value (sorted, unique). */
type ExpandResult = { ok: true; value: string } | { ok: false; missing: string[] };

/**
 * Expands `$name` and `${name}` like Go's os.Expand: `${…}` takes anything up
 * to `}`; bare `$` takes a run of letters, digits and `_` (so `$pv.name` is the
 * token `pv` followed by `.name`) or one shell special character; `${}` and
 * an unclosed `${` are dropped; a `$` followed by nothing usable stays.
 */
export function expandTemplate(template: string, values: Record<string, string>): ExpandResult {
  const missing = new Set<string>();
  let out = "";
  let copied = 0;
  for (let index = 0; index < template.length; index++) {
    if (template[index] !== "$" || index + 1 >= template.length) continue;
    out += template.slice(copied, index);
    const { name, width } = shellName(template.slice(index + 1));
    if (name === "" && width === 0) {
      out += "$"; // valid syntax, but no name: keep the dollar
    } else if (name !== "") {
      const value = Object.hasOwn(values, name) ? values[name] : undefined;
      if (value === undefined) missing.add(name);
      out += value ?? "";
    }
    index += width;
    copied = index + 1;
  }
  if (missing.size > 0) return { ok: false, missing: [...missing].sort() };
  return { ok: true, value: out + template.slice(copied) };
}

const SHELL_SPECIAL = "*#$@!?-0123456789";

/** Go's getShellName: the token after a `$` and how many characters it spans. */
function shellName(rest: string): { name: string; width: number } {
  if (rest[0] === "{") {
    if (rest.length > 2 && SHELL_SPECIAL.includes(rest[1] ?? "") && rest[2] === "}") {
      return { name: rest.slice(1, 2), width: 3 };
    }
    const close = rest.indexOf("}", 1);
    if (close === 1) return { name: "", width: 2 }; // bad syntax: eat "${}"
    if (close === -1) return { name: "", width: 1 }; // bad syntax: eat "${"
    return { name: rest.slice(1, close), width: close + 1 };
  }
  if (SHELL_SPECIAL.includes(rest[0] ?? "")) return { name: rest.slice(0, 1), width: 1 };
  const match = /^[A-Za-z0-9_]*/.exec(rest);
  const name = match?.[0] ?? "";
  return { name, width: name.length };
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** A namespace name: lower-case alphanumerics and '-', at most 63 characters. */
export function isDns1123Label(value: string): boolean {
  return value.length <= 63 && DNS1123_LABEL.test(value);
}

/** A Secret name: dot-separated DNS-1123 labels, at most 253 characters. */
export function isDns1123Subdomain(value: string): boolean {
  return value.length <= 253 && DNS1123_SUBDOMAIN.test(value);
}

/** Go's `%q` of a []string, e.g. `["a" "b"]` (JSON quoting matches Go's for printable text). */
export function goQuoteList(values: readonly string[]): string {
  return `[${values.map((value) => JSON.stringify(value)).join(" ")}]`;
}
