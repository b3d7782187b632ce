import { strictEqual } from "node:assert/strict";
import { goJson, goQuote, stringValue } from "./go_text.ts";

Deno.test("goQuote() escapes as Go's strconv.Quote does", () => {
  const cases: [string, string][] = [
    ["plain text", '"plain text"'],
    ['say "hi" \\ bye', '"say \\"hi\\" \\\\ bye"'],
    ["tab\tnew\nbell\x07nul\x00del\x7f", '"tab\\tnew\\nbell\\anul\\x00del\\x7f"'],
    ["héllo ☃ 😀", '"héllo ☃ 😀"'],
    // Not printable for Go: no-break space, zero-width space, private use, U+10FFFF.
    ["\u00a0\u200b\ue000\u{10ffff}", '"\\u00a0\\u200b\\ue000\\U0010ffff"'],
    ["it's", `"it's"`],
  ];
  for (const [input, quoted] of cases) strictEqual(goQuote(input), quoted, JSON.stringify(input));
});

Deno.test("stringValue() writes multi-line strings as klog's indented block", () => {
  strictEqual(stringValue("one line"), '="one line"');
  strictEqual(stringValue("a\nb"), "=<\n\ta\n\tb\n >");
  strictEqual(stringValue("a\n"), "=<\n\ta\n >");
  strictEqual(stringValue("a\n\nb"), "=<\n\ta\n\t\n\tb\n >");
});

Deno.test("goJson() escapes <, > and & as Go's encoding/json does", () => {
  strictEqual(
    goJson({ html: "<a&b>", n: 1, list: [true, null] }),
    '{"html":"\\u003ca\\u0026b\\u003e","n":1,"list":[true,null]}',
  );
});
