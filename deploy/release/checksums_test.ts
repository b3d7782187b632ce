import { strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { runCommand } from "../image/command.ts";
import { writeChecksums } from "./checksums.ts";

Deno.test("sha256sum -c verifies SHA256SUMS, and catches a changed file", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(join(dir, "b.tar.gz"), "bundle");
    await Deno.writeTextFile(join(dir, "a.json"), "{}");
    await writeChecksums(dir);
    const lines = (await Deno.readTextFile(join(dir, "SHA256SUMS"))).split("\n");
    strictEqual(lines[0]!.endsWith("  a.json"), true);
    strictEqual(lines[1]!.endsWith("  b.tar.gz"), true);
    await runCommand("sha256sum", ["--strict", "-c", "SHA256SUMS"], { cwd: dir });
    await Deno.writeTextFile(join(dir, "a.json"), "[]");
    const failed = await runCommand("sha256sum", ["-c", "SHA256SUMS"], { cwd: dir }).then(
      () => false,
      () => true,
    );
    strictEqual(failed, true);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
