import { deepStrictEqual } from "node:assert/strict";
import type { AccessModeName } from "../../csi/types.ts";
import { toCsiAccessMode, volumeCapabilities } from "./capabilities.ts";

Deno.test("toCsiAccessMode() maps each Kubernetes mode as csi-lib-utils does", () => {
  const table: [string, AccessModeName, AccessModeName][] = [
    // mode, without SINGLE_NODE_MULTI_WRITER, with it
    ["ReadWriteOnce", "SINGLE_NODE_WRITER", "SINGLE_NODE_MULTI_WRITER"],
    ["ReadWriteOncePod", "SINGLE_NODE_WRITER", "SINGLE_NODE_SINGLE_WRITER"],
    ["ReadOnlyMany", "MULTI_NODE_READER_ONLY", "MULTI_NODE_READER_ONLY"],
    ["ReadWriteMany", "MULTI_NODE_MULTI_WRITER", "MULTI_NODE_MULTI_WRITER"],
  ];
  for (const [mode, plain, withSnmw] of table) {
    deepStrictEqual(toCsiAccessMode(mode, { singleNodeMultiWriter: false }), plain, mode);
    deepStrictEqual(toCsiAccessMode(mode, { singleNodeMultiWriter: true }), withSnmw, mode);
  }
  deepStrictEqual(
    toCsiAccessMode("ReadWriteSometimes", { singleNodeMultiWriter: false }),
    undefined,
  );
  deepStrictEqual(toCsiAccessMode("constructor", { singleNodeMultiWriter: false }), undefined);
});

Deno.test("volumeCapabilities() gives one mount capability per access mode with fsType and mount flags", () => {
  deepStrictEqual(
    volumeCapabilities(["ReadWriteOnce", "ReadOnlyMany"], {
      volumeMode: "Filesystem",
      fsType: "xfs",
      mountOptions: ["noatime"],
      singleNodeMultiWriter: false,
    }),
    {
      ok: true,
      value: [
        {
          mount: { fs_type: "xfs", mount_flags: ["noatime"] },
          access_mode: { mode: "SINGLE_NODE_WRITER" },
        },
        {
          mount: { fs_type: "xfs", mount_flags: ["noatime"] },
          access_mode: { mode: "MULTI_NODE_READER_ONLY" },
        },
      ],
    },
  );
});

Deno.test("volumeCapabilities() treats an absent volumeMode as Filesystem with no mount flags", () => {
  deepStrictEqual(
    volumeCapabilities(["ReadWriteOncePod"], {
      volumeMode: undefined,
      fsType: "",
      mountOptions: undefined,
      singleNodeMultiWriter: true,
    }),
    {
      ok: true,
      value: [{
        mount: { fs_type: "", mount_flags: [] },
        access_mode: { mode: "SINGLE_NODE_SINGLE_WRITER" },
      }],
    },
  );
});

Deno.test("volumeCapabilities() gives block access for Block mode and ignores fsType and mount flags", () => {
  deepStrictEqual(
    volumeCapabilities(["ReadWriteMany"], {
      volumeMode: "Block",
      fsType: "ext4",
      mountOptions: ["noatime"],
      singleNodeMultiWriter: false,
    }),
    { ok: true, value: [{ block: {}, access_mode: { mode: "MULTI_NODE_MULTI_WRITER" } }] },
  );
});

Deno.test("volumeCapabilities() refuses an unknown access mode with csi-lib-utils' message", () => {
  deepStrictEqual(
    volumeCapabilities(["ReadWriteOnce", "ReadWriteSometimes"], {
      volumeMode: "Filesystem",
      fsType: "",
      mountOptions: undefined,
      singleNodeMultiWriter: false,
    }),
    {
      ok: false,
      mode: "ReadWriteSometimes",
      error: "unsupported AccessMode combination: [ReadWriteSometimes]",
    },
  );
});
