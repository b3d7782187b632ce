import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { expandTemplate, goQuoteList, isDns1123Label, isDns1123Subdomain } from "./template.ts";

const VALUES = { "pv.name": "pvc-1", "pvc.namespace": "apps", x: "X", "1": "one" };

Deno.test("expandTemplate() expands ${name} and $name like Go's os.Expand", () => {
  const cases: [string, string][] = [
    ["plain", "plain"],
    ["${pv.name}", "pvc-1"],
    ["${pvc.namespace}-secrets", "apps-secrets"],
    ["$x-y", "X-y"],
    ["a$1b", "aoneb"],
    ["${1}", "one"],
    ["cost$", "cost$"], // a trailing dollar stays
    ["a$%b", "a$%b"], // a dollar before a non-name character stays
    ["a${}b", "ab"], // "${}" is eaten
    ["a${b", "ab"], // an unclosed "${" is eaten
  ];
  for (const [template, value] of cases) {
    deepStrictEqual(expandTemplate(template, VALUES), { ok: true, value }, template);
  }
});

Deno.test("expandTemplate() reports every unknown token, sorted and once", () => {
  deepStrictEqual(expandTemplate("${b}-${a}-${b}-$pv.name", VALUES), {
    ok: false,
    missing: ["a", "b", "pv"],
  });
});

Deno.test("expandTemplate() does not resolve inherited object properties", () => {
  deepStrictEqual(expandTemplate("${toString}", {}), { ok: false, missing: ["toString"] });
});

Deno.test("isDns1123Label() accepts namespace names and nothing else", () => {
  for (const good of ["a", "apps", "a-1", "0", "a".repeat(63)]) {
    strictEqual(isDns1123Label(good), true, good);
  }
  for (const bad of ["", "A", "a.b", "-a", "a-", "a_b", "a".repeat(64)]) {
    strictEqual(isDns1123Label(bad), false, bad);
  }
});

Deno.test("isDns1123Subdomain() accepts secret names and nothing else", () => {
  for (const good of ["a", "my.secret", "a-b.c-d", "a".repeat(253)]) {
    strictEqual(isDns1123Subdomain(good), true, good);
  }
  for (const bad of ["", "My", "a..b", ".a", "a.", "a_b", "a".repeat(254)]) {
    strictEqual(isDns1123Subdomain(bad), false, bad);
  }
});

Deno.test("goQuoteList() prints a string slice as Go's %q does", () => {
  strictEqual(goQuoteList(["a", "b c"]), '["a" "b c"]');
  strictEqual(goQuoteList([]), "[]");
});
