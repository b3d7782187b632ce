import { strictEqual } from "node:assert/strict";
import { readFileSync } from "node:fs";
import { CSI_PROTO } from "./csi_proto.ts";

Deno.test("embedded CSI_PROTO is the text of proto/csi.proto (run `deno task proto:embed`)", () => {
  const onDisk = readFileSync(new URL("csi.proto", import.meta.url), "utf8");
  strictEqual(CSI_PROTO, onDisk);
});
