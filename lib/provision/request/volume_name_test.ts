import { deepStrictEqual } from "node:assert/strict";
import { makeVolumeName } from "./volume_name.ts";

const UID = "0f8b4c2e-1a2b-4c3d-8e9f-0a1b2c3d4e5f";

Deno.test("makeVolumeName() keeps the whole UID with dashes for --volume-name-uuid-length=-1", () => {
  deepStrictEqual(makeVolumeName(UID, { prefix: "pvc", uuidLength: -1 }), {
    ok: true,
    value: `pvc-${UID}`,
  });
});

Deno.test("makeVolumeName() cuts the dashless UID to --volume-name-uuid-length", () => {
  const cases: [number, string][] = [
    [1, "pvc-0"],
    [8, "pvc-0f8b4c2e"],
    [16, "pvc-0f8b4c2e1a2b4c3d"],
    [32, "pvc-0f8b4c2e1a2b4c3d8e9f0a1b2c3d4e5f"],
  ];
  for (const [uuidLength, value] of cases) {
    deepStrictEqual(makeVolumeName(UID, { prefix: "pvc", uuidLength }), { ok: true, value });
  }
});

Deno.test("makeVolumeName() keeps the whole dashless UID when the length exceeds it (upstream panics)", () => {
  deepStrictEqual(makeVolumeName(UID, { prefix: "vol", uuidLength: 64 }), {
    ok: true,
    value: "vol-0f8b4c2e1a2b4c3d8e9f0a1b2c3d4e5f",
  });
});

Deno.test("makeVolumeName() refuses an empty prefix with upstream's message", () => {
  deepStrictEqual(makeVolumeName(UID, { prefix: "", uuidLength: -1 }), {
    ok: false,
    error: "volume name prefix cannot be of length 0",
  });
});

Deno.test("makeVolumeName() refuses a claim without UID with upstream's message", () => {
  deepStrictEqual(makeVolumeName("", { prefix: "pvc", uuidLength: -1 }), {
    ok: false,
    error: "corrupted PVC object, it is missing UID",
  });
});
