import { deepStrictEqual } from "node:assert/strict";
import { classifyDataSource } from "./data_source.ts";
import { claim } from "../../tests/builders/provision.ts";

const GATE_OFF = { crossNamespaceVolumeDataSource: false };

Deno.test("classifyDataSource() finds nothing to do for a claim without a data source", () => {
  deepStrictEqual(classifyDataSource(claim(), GATE_OFF), { kind: "none" });
});

Deno.test("classifyDataSource() prefers spec.dataSource over spec.dataSourceRef, as upstream normalizes", () => {
  const both = claim({
    spec: {
      dataSource: { kind: "Backup", apiGroup: "example.com", name: "b" },
      dataSourceRef: { kind: "PersistentVolumeClaim", name: "origin" },
    },
  });
  deepStrictEqual(classifyDataSource(both, GATE_OFF).kind, "externalPopulator");
});

Deno.test("classifyDataSource() lets a cross-namespace populator through when the gate is on", () => {
  const crossNamespace = claim({
    spec: { dataSourceRef: { kind: "Backup", name: "b", namespace: "other" } },
  });
  deepStrictEqual(
    classifyDataSource(crossNamespace, { crossNamespaceVolumeDataSource: true }).kind,
    "externalPopulator",
  );
});

Deno.test("classifyDataSource() refuses a PersistentVolumeClaim source whatever its API group", () => {
  const clone = claim({
    spec: { dataSource: { kind: "PersistentVolumeClaim", apiGroup: "", name: "origin" } },
  });
  deepStrictEqual(classifyDataSource(clone, GATE_OFF), {
    kind: "problem",
    reason: "ProvisioningFailed",
    message:
      'cannot clone PersistentVolumeClaim "origin": snapshots and clones come in a later version of ' +
      'csi-node-provisioner (PersistentVolumeClaim "apps/data", spec.dataSource)',
    retry: "slow",
    state: "finished",
  });
});
