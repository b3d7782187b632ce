import { strictEqual } from "node:assert/strict";
import { readFileSync } from "node:fs";
import { withFlagTable } from "./docs_flags.ts";

Deno.test("docs/flags.md's flag section is the flag table (run `deno task docs:flags`)", () => {
  const page = readFileSync(new URL("../../docs/flags.md", import.meta.url), "utf8");
  strictEqual(page, withFlagTable(page));
});
