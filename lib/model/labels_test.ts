import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import {
  fnv32a,
  labelSelector,
  MANAGED_BY_BASE,
  managedByLabel,
  nameWithMaxLength,
  nodeLabels,
} from "./labels.ts";

const node = (letters: number) => `node${"a".repeat(letters)}`;

Deno.test("fnv32a() is Go's FNV-1a 32", () => {
  strictEqual(fnv32a(""), "811c9dc5");
  strictEqual(fnv32a("a"), "e40c292c");
  strictEqual(fnv32a(MANAGED_BY_BASE), "53f40b57");
});

// The vectors of upstream's cmd/csi-provisioner/util_test.go (TestGetNameWithMaxLength).
const UPSTREAM_VECTORS: { name: string; base: string; nodeName: string; expected: string }[] = [
  {
    name: "unchanged",
    base: MANAGED_BY_BASE,
    nodeName: "node01",
    expected: "external-provisioner-node01",
  },
  { name: "with empty base", base: "", nodeName: "node01", expected: "node01" },
  {
    name: "exactly 63",
    base: MANAGED_BY_BASE,
    nodeName: node(38),
    expected: `external-provisioner-${node(38)}`,
  },
  {
    name: "one over (43-character node name)",
    base: MANAGED_BY_BASE,
    nodeName: node(39),
    expected: `external-p-53f40b57-${node(39)}`,
  },
  {
    name: "long node name with 52",
    base: MANAGED_BY_BASE,
    nodeName: node(48),
    expected: `e-53f40b57-${node(48)}`,
  },
  {
    name: "long node name with 53, ignore suffix",
    base: MANAGED_BY_BASE,
    nodeName: node(49),
    expected: "external-provisioner-a3607ff1",
  },
  {
    name: "very long, ignore suffix",
    base: MANAGED_BY_BASE,
    nodeName: node(63),
    expected: "external-provisioner-df38e37f",
  },
  { name: "long node name, with empty base", base: "", nodeName: node(63), expected: "fa65587e" },
];

for (const vector of UPSTREAM_VECTORS) {
  Deno.test(`nameWithMaxLength(): upstream vector "${vector.name}"`, () => {
    strictEqual(nameWithMaxLength(vector.base, vector.nodeName, 63), vector.expected);
  });
}

Deno.test("managedByLabel() is a valid label value of at most 63 characters for any node", () => {
  for (const letters of [0, 10, 38, 39, 48, 49, 63, 200]) {
    const value = managedByLabel(node(letters));
    ok(value.length <= 63, value);
    ok(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(value), value);
  }
  strictEqual(managedByLabel(node(39)), `external-p-53f40b57-${node(39)}`);
  strictEqual(managedByLabel(node(49)), "external-provisioner-a3607ff1");
});

Deno.test("nodeLabels() and labelSelector(): the informers select exactly these labels", () => {
  const labels = nodeLabels("hostpath.csi.k8s.io", "node-a");
  deepStrictEqual(labels, {
    "csi.storage.k8s.io/drivername": "hostpath.csi.k8s.io",
    "csi.storage.k8s.io/managed-by": "external-provisioner-node-a",
  });
  strictEqual(
    labelSelector(labels),
    "csi.storage.k8s.io/drivername=hostpath.csi.k8s.io," +
      "csi.storage.k8s.io/managed-by=external-provisioner-node-a",
  );
});
