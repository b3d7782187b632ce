import { strictEqual } from "node:assert/strict";
import { readFileSync } from "node:fs";
import { withFlagTable } from "./readme_flags.ts";

Deno.test("the README's flag section is the flag table (run `deno task readme:flags`)", () => {
  const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
  strictEqual(readme, withFlagTable(readme));
});
