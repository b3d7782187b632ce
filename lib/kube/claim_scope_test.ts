/**
 * What the claim cache keeps of a tenant's claims: only claims of the
 * driver's classes (and, bounded, of classes not known yet), with only the
 * annotations the agent reads; and when a class change must list the claims
 * again.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import type { StorageClass } from "../model/objects.ts";
import { ClaimScope } from "./claim_scope.ts";
import type { RawObject } from "./informer/types.ts";
import { trimClaim } from "./trim.ts";
import { templateAnnotationKeys } from "../secrets/references.ts";
import { DRIVER, namedClass } from "../../tests/builders/provision.ts";

const SELECTED = "volume.kubernetes.io/selected-node";
const PROVISIONER = "volume.kubernetes.io/storage-provisioner";

function storageClass(
  name: string,
  provisioner = DRIVER,
  parameters?: Record<string, string>,
): StorageClass {
  return namedClass(name, { provisioner, parameters });
}

/** The class informer, as a map. */
function classView(...classes: StorageClass[]) {
  const byName = new Map(classes.map((item) => [item.metadata.name, item]));
  return {
    byName,
    view: { get: (name: string) => byName.get(name), list: () => [...byName.values()] },
  };
}

function rawClaim(
  name: string,
  options: {
    className?: string;
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
    dataSource?: { kind: string; name: string };
  },
): RawObject {
  const raw = {
    metadata: {
      name,
      namespace: "ns",
      uid: `uid-${name}`,
      resourceVersion: "7",
      annotations: options.annotations ?? {},
      ...(options.labels ? { labels: options.labels } : {}),
    },
    spec: {
      accessModes: ["ReadWriteOnce"],
      resources: { requests: { storage: "1Gi" } },
      ...(options.className === undefined ? {} : { storageClassName: options.className }),
      ...(options.dataSource ? { dataSource: options.dataSource } : {}),
    },
    status: { phase: "Pending" },
  };
  return raw;
}

const BULK = { "tenant.example/notes": "x".repeat(50 * 1024) };

Deno.test("the claim cache keeps a claim of the driver's class with only the annotations the agent reads, and no labels", () => {
  const { view } = classView(storageClass("fast"));
  const scope = new ClaimScope({
    driverName: DRIVER,
    templateKeys: templateAnnotationKeys,
    classes: view,
  });
  const claim = trimClaim(
    rawClaim("data", {
      className: "fast",
      annotations: { [SELECTED]: "node-a", [PROVISIONER]: DRIVER, ...BULK },
      labels: { app: "db" },
    }),
    { nodeName: "node-a", scope },
  );
  deepStrictEqual(claim?.metadata.annotations, { [SELECTED]: "node-a", [PROVISIONER]: DRIVER });
  strictEqual(claim?.metadata.labels, undefined);
  strictEqual(claim?.spec.storageClassName, "fast");
});

Deno.test("the claim cache keeps the annotations the driver's secret templates name", () => {
  const { view } = classView(
    storageClass("fast", DRIVER, {
      "csi.storage.k8s.io/provisioner-secret-name": "${pvc.annotations['team.example/secret']}",
      "csi.storage.k8s.io/provisioner-secret-namespace": "${pvc.namespace}",
    }),
    storageClass("theirs", "other.csi.example", {
      "csi.storage.k8s.io/provisioner-secret-name": "${pvc.annotations['not.ours/key']}",
      "csi.storage.k8s.io/provisioner-secret-namespace": "ns",
    }),
  );
  const scope = new ClaimScope({
    driverName: DRIVER,
    templateKeys: templateAnnotationKeys,
    classes: view,
  });
  scope.classChanged({ key: "fast", old: undefined, new: view.get("fast") });
  const annotations = { "team.example/secret": "s1", "not.ours/key": "k", ...BULK };
  const claim = trimClaim(rawClaim("data", { className: "fast", annotations }), {
    nodeName: "node-a",
    scope,
  });
  deepStrictEqual(claim?.metadata.annotations, { "team.example/secret": "s1" });
});

Deno.test("the claim cache drops claims of another provisioner's class, but keeps the ones clone protection reads", () => {
  const { view } = classView(storageClass("theirs", "other.csi.example"));
  const scope = new ClaimScope({
    driverName: DRIVER,
    templateKeys: templateAnnotationKeys,
    classes: view,
  });
  const options = { nodeName: "node-a", scope };
  strictEqual(
    trimClaim(rawClaim("a", { className: "theirs", annotations: BULK }), options),
    undefined,
  );
  const clone = trimClaim(
    rawClaim("b", {
      className: "theirs",
      annotations: BULK,
      dataSource: { kind: "PersistentVolumeClaim", name: "a" },
    }),
    options,
  );
  deepStrictEqual(clone?.spec.dataSource, { kind: "PersistentVolumeClaim", name: "a" });
  strictEqual(clone?.metadata.annotations, undefined, "its annotations trimmed all the same");
});

Deno.test("the claim cache keeps claims of classes not known yet (the beta annotation counts, no class is one) up to its bound", () => {
  const { view } = classView();
  const entries: number[] = [];
  let refused = 0;
  const scope = new ClaimScope({
    driverName: DRIVER,
    templateKeys: templateAnnotationKeys,
    classes: view,
    limit: 2,
    observer: { size: (count) => entries.push(count), evicted: () => refused++ },
  });
  const options = { nodeName: "node-a", scope };
  const kept = [
    rawClaim("a", { className: "later" }),
    rawClaim("b", { annotations: { "volume.beta.kubernetes.io/storage-class": "later" } }),
    rawClaim("c", {}),
  ].map((raw) => trimClaim(raw, options)?.metadata.name);
  deepStrictEqual(kept, ["a", "b", undefined]);
  strictEqual(refused, 1);
  strictEqual(trimClaim(rawClaim("a", { className: "later" }), options)?.metadata.name, "a");
  scope.forget("ns/a");
  strictEqual(trimClaim(rawClaim("c", {}), options)?.metadata.name, "c", "room again");
  scope.retain(["ns/c"]);
  deepStrictEqual(entries.at(-1), 1, "only what the cache holds after a list");
});

Deno.test("a class change relists the claims only when dropped claims or new annotation keys may now be needed", () => {
  const { view, byName } = classView();
  const scope = new ClaimScope({
    driverName: DRIVER,
    templateKeys: templateAnnotationKeys,
    classes: view,
    limit: 1,
  });
  const options = { nodeName: "node-a", scope };
  const add = (item: StorageClass) => {
    byName.set(item.metadata.name, item);
    return scope.classChanged({ key: item.metadata.name, old: undefined, new: item });
  };
  strictEqual(add(storageClass("fresh")), false, "a class of the driver nobody's claim named");
  trimClaim(rawClaim("a", { className: "late" }), options);
  strictEqual(
    trimClaim(rawClaim("b", { className: "late" }), options),
    undefined,
    "over the bound",
  );
  strictEqual(add(storageClass("theirs", "other.csi.example")), false, "another driver's class");
  strictEqual(add(storageClass("late")), true, "claims of it were dropped: list them again");
  strictEqual(
    add(
      storageClass("secret", DRIVER, {
        "csi.storage.k8s.io/provisioner-secret-name": "${pvc.annotations['team/secret']}",
        "csi.storage.k8s.io/provisioner-secret-namespace": "ns",
      }),
    ),
    true,
    "a template names an annotation the cache did not keep",
  );
  strictEqual(scope.annotationKeys.has("team/secret"), true);
});
