import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { CSI_DESCRIPTOR } from "./csi_proto.ts";
import { describeCsiProto } from "./describe.ts";

/**
 * sha256 of csi.proto in the Go module github.com/container-storage-interface/spec
 * v1.12.0 (module hash h1:zrFOEqpR5AghNaaDG4qyedwPBqU2fU0dWjLQMP/azK0=), see proto/README.md.
 */
const UPSTREAM_V1_12_0_SHA256 = "5b81236a3809f3ff0b877ff9b82215d0b74a8e291d7f3ec6ee1a44f537c0f86a";

const onDisk = () => readFileSync(new URL("csi.proto", import.meta.url));

Deno.test("proto/csi.proto is upstream's CSI v1.12.0 csi.proto, byte for byte", () => {
  strictEqual(createHash("sha256").update(onDisk()).digest("hex"), UPSTREAM_V1_12_0_SHA256);
});

Deno.test("embedded CSI_DESCRIPTOR is proto/csi.proto parsed (run `deno task proto:embed`)", () => {
  deepStrictEqual(CSI_DESCRIPTOR, describeCsiProto(onDisk().toString("utf8")));
});
