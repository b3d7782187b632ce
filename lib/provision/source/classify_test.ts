import { deepStrictEqual } from "node:assert/strict";
import { classifyDataSource } from "./classify.ts";
import { claim } from "../../../tests/builders/provision.ts";

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

Deno.test("classifyDataSource() finds a clone whatever its API group is, and a restore in the claim's namespace", () => {
  const clone = claim({
    spec: { dataSource: { kind: "PersistentVolumeClaim", apiGroup: "", name: "origin" } },
  });
  deepStrictEqual(classifyDataSource(clone, GATE_OFF), {
    kind: "source",
    source: { kind: "clone", namespace: "apps", name: "origin", field: "spec.dataSource" },
  });
  const restore = claim({
    spec: {
      dataSourceRef: { kind: "VolumeSnapshot", apiGroup: "snapshot.storage.k8s.io", name: "s" },
    },
  });
  deepStrictEqual(classifyDataSource(restore, GATE_OFF), {
    kind: "source",
    source: { kind: "snapshot", namespace: "apps", name: "s", field: "spec.dataSourceRef" },
  });
});

Deno.test("classifyDataSource() checks in upstream's order: namespace gate, empty name, API group", () => {
  const messages = [
    { dataSourceRef: { kind: "VolumeSnapshot", name: "", namespace: "other" } },
    { dataSource: { kind: "VolumeSnapshot", name: "" } },
    { dataSource: { kind: "VolumeSnapshot", name: "s", apiGroup: "example.com" } },
  ].map((spec) => {
    const outcome = classifyDataSource(claim({ spec }), GATE_OFF);
    return outcome.kind === "problem"
      ? outcome.message.replace(/ \(Persistent.*$/, "")
      : outcome.kind;
  });
  deepStrictEqual(messages, [
    "dataSourceRef namespace specified but the CrossNamespaceVolumeDataSource feature is disabled",
    "the PVC source not found for PVC data",
    "the PVC source does not belong to the right APIGroup. Expected snapshot.storage.k8s.io, " +
    "Got example.com",
  ]);
});
