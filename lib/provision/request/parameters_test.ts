import { deepStrictEqual } from "node:assert/strict";
import {
  RESERVED_PARAMETER_KEYS,
  resolveFsType,
  stripReservedParameters,
  withExtraCreateMetadata,
} from "./parameters.ts";
import { deprecationWarning } from "../../model/messages.ts";

Deno.test("stripReservedParameters() removes exactly the 17 reserved keys and keeps the rest", () => {
  const reserved = Object.fromEntries(RESERVED_PARAMETER_KEYS.map((key) => [key, "x"]));
  deepStrictEqual(RESERVED_PARAMETER_KEYS.length, 17);
  deepStrictEqual(
    stripReservedParameters({
      ...reserved,
      kind: "fast",
      fstype: "ext4",
      csiProvisionerSecretName: "old",
      "example.com/csi.storage.k8s.io/x": "kept: the prefix must start the key",
    }),
    {
      ok: true,
      value: {
        kind: "fast",
        fstype: "ext4",
        csiProvisionerSecretName: "old",
        "example.com/csi.storage.k8s.io/x": "kept: the prefix must start the key",
      },
    },
  );
});

Deno.test("stripReservedParameters() lists every reserved key upstream strips", () => {
  deepStrictEqual(RESERVED_PARAMETER_KEYS, [
    "csi.storage.k8s.io/fstype",
    "csi.storage.k8s.io/secret-name",
    "csi.storage.k8s.io/secret-namespace",
    "csi.storage.k8s.io/provisioner-secret-name",
    "csi.storage.k8s.io/provisioner-secret-namespace",
    "csi.storage.k8s.io/controller-publish-secret-name",
    "csi.storage.k8s.io/controller-publish-secret-namespace",
    "csi.storage.k8s.io/node-stage-secret-name",
    "csi.storage.k8s.io/node-stage-secret-namespace",
    "csi.storage.k8s.io/node-publish-secret-name",
    "csi.storage.k8s.io/node-publish-secret-namespace",
    "csi.storage.k8s.io/controller-expand-secret-name",
    "csi.storage.k8s.io/controller-expand-secret-namespace",
    "csi.storage.k8s.io/node-expand-secret-name",
    "csi.storage.k8s.io/node-expand-secret-namespace",
    "csi.storage.k8s.io/controller-modify-secret-name",
    "csi.storage.k8s.io/controller-modify-secret-namespace",
  ]);
});

Deno.test("stripReservedParameters() reports the first unknown reserved key in sorted order", () => {
  deepStrictEqual(
    stripReservedParameters({
      "csi.storage.k8s.io/zzz": "1",
      "csi.storage.k8s.io/foo": "1",
      "csi.storage.k8s.io/pvc/name": "not for the class to set",
    }),
    {
      ok: false,
      key: "csi.storage.k8s.io/foo",
      error: "failed to strip CSI Parameters of prefixed keys: found unknown parameter key " +
        '"csi.storage.k8s.io/foo" with reserved namespace csi.storage.k8s.io/',
    },
  );
});

Deno.test("stripReservedParameters() accepts a class without parameters", () => {
  deepStrictEqual(stripReservedParameters(undefined), { ok: true, value: {} });
});

Deno.test("resolveFsType() picks the prefixed key, the deprecated key in any case, or the default", () => {
  const cases: [Record<string, string>, string, string | undefined][] = [
    [{ "csi.storage.k8s.io/fstype": "xfs" }, "xfs", undefined],
    [{ fstype: "ext3" }, "ext3", "fstype"],
    [{ FsType: "ext3" }, "ext3", "FsType"],
    [{ FSTYPE: "btrfs" }, "btrfs", "FSTYPE"],
    [{}, "ext4", undefined],
    [{ "csi.storage.k8s.io/fstype": "" }, "ext4", undefined],
  ];
  for (const [parameters, value, deprecatedKey] of cases) {
    deepStrictEqual(
      resolveFsType(parameters, { defaultFstype: "ext4" }),
      { ok: true, value, deprecatedKey },
      JSON.stringify(parameters),
    );
  }
});

Deno.test("resolveFsType() gives an empty fsType when neither the class nor --default-fstype sets one", () => {
  deepStrictEqual(resolveFsType({}, { defaultFstype: "" }), {
    ok: true,
    value: "",
    deprecatedKey: undefined,
  });
});

Deno.test("resolveFsType() refuses two fsType keys with upstream's message", () => {
  const error =
    'fstype specified in parameters with both "fstype" and "csi.storage.k8s.io/fstype" keys';
  deepStrictEqual(
    resolveFsType({ fstype: "ext4", "csi.storage.k8s.io/fstype": "xfs" }, { defaultFstype: "" }),
    { ok: false, keys: ["csi.storage.k8s.io/fstype", "fstype"], error },
  );
  deepStrictEqual(resolveFsType({ fstype: "ext4", FsType: "xfs" }, { defaultFstype: "" }), {
    ok: false,
    keys: ["FsType", "fstype"],
    error,
  });
});

Deno.test("deprecationWarning() says which key to use instead", () => {
  deepStrictEqual(
    deprecationWarning("fstype", "csi.storage.k8s.io/fstype"),
    '"fstype" is deprecated and will be removed in a future release, please use "csi.storage.k8s.io/fstype" instead',
  );
});

Deno.test("withExtraCreateMetadata() adds the claim name, claim namespace and PV name", () => {
  deepStrictEqual(
    withExtraCreateMetadata({ kind: "fast" }, {
      claimName: "data",
      claimNamespace: "apps",
      volumeName: "pvc-1",
    }),
    {
      kind: "fast",
      "csi.storage.k8s.io/pvc/name": "data",
      "csi.storage.k8s.io/pvc/namespace": "apps",
      "csi.storage.k8s.io/pv/name": "pvc-1",
    },
  );
});
