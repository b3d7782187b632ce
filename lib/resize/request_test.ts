import { deepStrictEqual } from "node:assert/strict";
import { boundVolume } from "../../tests/builders/resize.ts";
import { accessModeOf, expandRequest } from "./request.ts";

Deno.test("expandRequest(): the handle, the bytes, the secrets and one mount capability", () => {
  deepStrictEqual(
    expandRequest(boundVolume(), { bytes: 5n, secrets: { k: "v" }, singleNodeMultiWriter: false }),
    {
      ok: true,
      request: {
        volume_id: "vol-1",
        capacity_range: { required_bytes: "5" },
        secrets: { k: "v" },
        volume_capability: {
          mount: { fs_type: "ext4", mount_flags: ["noatime"] },
          access_mode: { mode: "SINGLE_NODE_WRITER" },
        },
      },
    },
  );
});

Deno.test("accessModeOf(): the PV's modes together, as csi-lib-utils maps them", () => {
  deepStrictEqual(accessModeOf(["ReadWriteOnce"], true), {
    ok: true,
    mode: "SINGLE_NODE_MULTI_WRITER",
  });
  deepStrictEqual(accessModeOf(["ReadWriteOnce", "ReadWriteMany"], false), {
    ok: true,
    mode: "MULTI_NODE_MULTI_WRITER",
  });
  deepStrictEqual(accessModeOf(["ReadOnlyMany", "ReadWriteOnce"], false).ok, false);
});
