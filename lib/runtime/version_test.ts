import { ok, strictEqual } from "node:assert/strict";
import { COMMIT, VERSION, versionText } from "./version.ts";

Deno.test("a compiled binary's version names the commit compiled in", () => {
  strictEqual(versionText("0123abc"), `${VERSION} (commit 0123abc)`);
});

Deno.test("from source there is no commit, and --version says so", () => {
  strictEqual(COMMIT, undefined);
  strictEqual(versionText(), `${VERSION} (running from source under Deno: no commit compiled in)`);
  ok(/^\d+\.\d+\.\d+/.test(VERSION));
});
