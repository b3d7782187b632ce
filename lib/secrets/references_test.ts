import { deepStrictEqual } from "node:assert/strict";
import {
  deletionSecretAnnotations,
  deletionSecretFromAnnotations,
  modifySecretAnnotations,
} from "./annotations.ts";
import {
  resolvePvSecretReferences,
  resolveSecretReference,
  type SecretPurpose,
  type SecretTemplateInput,
  templateAnnotationKeys,
} from "./references.ts";
import { NO_PV_SECRETS } from "../../tests/builders/provision.ts";
import { CSI_PARAMETER_PREFIX as PREFIX } from "../model/keys.ts";

function input(parameters: Record<string, string>): SecretTemplateInput {
  return {
    parameters,
    className: "fast",
    volumeName: "pvc-1",
    claim: { name: "data", namespace: "apps", annotations: { "example.com/key": "tenant-key" } },
  };
}

Deno.test("resolveSecretReference() reads each purpose's own keys", () => {
  const cases: [SecretPurpose, string][] = [
    ["provisioner", "provisioner-secret"],
    ["controllerPublish", "controller-publish-secret"],
    ["nodeStage", "node-stage-secret"],
    ["nodePublish", "node-publish-secret"],
    ["controllerExpand", "controller-expand-secret"],
    ["nodeExpand", "node-expand-secret"],
    ["controllerModify", "controller-modify-secret"],
  ];
  for (const [purpose, stem] of cases) {
    const parameters = { [`${PREFIX}${stem}-name`]: stem, [`${PREFIX}${stem}-namespace`]: "vault" };
    deepStrictEqual(resolveSecretReference(purpose, input(parameters)), {
      ok: true,
      value: { name: stem, namespace: "vault" },
      warnings: [],
    }, purpose);
  }
});

Deno.test("resolveSecretReference() accepts the deprecated keys with a warning", () => {
  deepStrictEqual(
    resolveSecretReference(
      "provisioner",
      input({ csiProvisionerSecretName: "old", csiProvisionerSecretNamespace: "vault" }),
    ),
    {
      ok: true,
      value: { name: "old", namespace: "vault" },
      warnings: [
        '"csiProvisionerSecretName" is deprecated and will be removed in a future release, please use "csi.storage.k8s.io/provisioner-secret-name" instead',
        '"csiProvisionerSecretNamespace" is deprecated and will be removed in a future release, please use "csi.storage.k8s.io/provisioner-secret-namespace" instead',
      ],
    },
  );
});

Deno.test("resolveSecretReference() falls back to the default secret-name/secret-namespace pair", () => {
  const parameters = { [`${PREFIX}secret-name`]: "shared", [`${PREFIX}secret-namespace`]: "vault" };
  deepStrictEqual(resolveSecretReference("nodeStage", input(parameters)), {
    ok: true,
    value: { name: "shared", namespace: "vault" },
    warnings: [],
  });
});

Deno.test("resolveSecretReference() gives null when the class names no secret", () => {
  deepStrictEqual(resolveSecretReference("provisioner", input({ kind: "fast" })), {
    ok: true,
    value: null,
    warnings: [],
  });
});

Deno.test("resolveSecretReference() expands the templates of upstream's getSecretReference", () => {
  const parameters = {
    [`${PREFIX}node-publish-secret-name`]: "${pvc.name}-${pvc.annotations['example.com/key']}",
    [`${PREFIX}node-publish-secret-namespace`]: "${pvc.namespace}",
  };
  deepStrictEqual(resolveSecretReference("nodePublish", input(parameters)), {
    ok: true,
    value: { name: "data-tenant-key", namespace: "apps" },
    warnings: [],
  });
  const byVolume = { [`${PREFIX}secret-name`]: "${pv.name}", [`${PREFIX}secret-namespace`]: "$pv" };
  deepStrictEqual(
    resolveSecretReference("provisioner", { ...input(byVolume), volumeName: "pv" }),
    {
      ok: false,
      error:
        'error resolving value "$pv": invalid tokens: ["pv"] (StorageClass "fast", parameters["csi.storage.k8s.io/secret-namespace"])',
    },
  );
});

Deno.test("resolveSecretReference() errors name the purpose, the keys and the class", () => {
  const cases: [SecretPurpose, Record<string, string>, string][] = [
    [
      "provisioner",
      {
        csiProvisionerSecretName: "a",
        [`${PREFIX}provisioner-secret-name`]: "b",
        [`${PREFIX}provisioner-secret-namespace`]: "c",
      },
      // The single namespace key is not at fault: only the doubled name keys are named.
      'failed to get name and namespace template from params: Provisioner secrets specified in parameters with both "csi" and "csi.storage.k8s.io/" keys (StorageClass "fast", parameters["csiProvisionerSecretName"] and parameters["csi.storage.k8s.io/provisioner-secret-name"])',
    ],
    [
      "provisioner",
      {
        csiProvisionerSecretName: "a",
        csiProvisionerSecretNamespace: "c",
        [`${PREFIX}provisioner-secret-name`]: "b",
        [`${PREFIX}provisioner-secret-namespace`]: "c",
      },
      'failed to get name and namespace template from params: Provisioner secrets specified in parameters with both "csi" and "csi.storage.k8s.io/" keys (StorageClass "fast", parameters["csiProvisionerSecretName"] and parameters["csi.storage.k8s.io/provisioner-secret-name"] and parameters["csiProvisionerSecretNamespace"] and parameters["csi.storage.k8s.io/provisioner-secret-namespace"])',
    ],
    [
      "nodeStage",
      { [`${PREFIX}node-stage-secret-name`]: "a" },
      'failed to get name and namespace template from params: either name and namespace for NodeStage secrets specified, Both must be specified (StorageClass "fast", parameters["csi.storage.k8s.io/node-stage-secret-name"])',
    ],
    [
      "controllerExpand",
      {
        [`${PREFIX}controller-expand-secret-name`]: "",
        [`${PREFIX}controller-expand-secret-namespace`]: "x",
      },
      'failed to get name and namespace template from params: ControllerExpand secrets specified in parameters but value of either namespace or name is empty (StorageClass "fast", parameters["csi.storage.k8s.io/controller-expand-secret-name"] and parameters["csi.storage.k8s.io/controller-expand-secret-namespace"])',
    ],
    [
      "nodeExpand",
      { [`${PREFIX}secret-namespace`]: "x" },
      'failed to get default name and namespace template from params: either name and namespace for Default secrets specified, Both must be specified (StorageClass "fast", parameters["csi.storage.k8s.io/secret-namespace"])',
    ],
    [
      "controllerPublish",
      {
        [`${PREFIX}controller-publish-secret-name`]: "s",
        [`${PREFIX}controller-publish-secret-namespace`]: "${pvc.name}",
      },
      'error resolving value "${pvc.name}": invalid tokens: ["pvc.name"] (StorageClass "fast", parameters["csi.storage.k8s.io/controller-publish-secret-namespace"])',
    ],
    [
      "nodePublish",
      {
        [`${PREFIX}node-publish-secret-name`]: "s",
        [`${PREFIX}node-publish-secret-namespace`]: "Bad_NS",
      },
      '"Bad_NS" is not a valid namespace name (StorageClass "fast", parameters["csi.storage.k8s.io/node-publish-secret-namespace"])',
    ],
    [
      "nodePublish",
      {
        [`${PREFIX}node-publish-secret-name`]: "s",
        [`${PREFIX}node-publish-secret-namespace`]: "${pv.name}.x",
      },
      '"${pv.name}.x" resolved to "pvc-1.x" which is not a valid namespace name (StorageClass "fast", parameters["csi.storage.k8s.io/node-publish-secret-namespace"])',
    ],
    [
      "provisioner",
      {
        [`${PREFIX}provisioner-secret-name`]: "${pvc.annotations['missing']}",
        [`${PREFIX}provisioner-secret-namespace`]: "ns",
      },
      `error resolving value "\${pvc.annotations['missing']}": invalid tokens: ["pvc.annotations['missing']"] (StorageClass "fast", parameters["csi.storage.k8s.io/provisioner-secret-name"])`,
    ],
    [
      "provisioner",
      {
        [`${PREFIX}provisioner-secret-name`]: "${pvc.name}_X",
        [`${PREFIX}provisioner-secret-namespace`]: "ns",
      },
      '"${pvc.name}_X" resolved to "data_X" which is not a valid secret name (StorageClass "fast", parameters["csi.storage.k8s.io/provisioner-secret-name"])',
    ],
    [
      "provisioner",
      {
        [`${PREFIX}provisioner-secret-name`]: "UPPER",
        [`${PREFIX}provisioner-secret-namespace`]: "ns",
      },
      '"UPPER" is not a valid secret name (StorageClass "fast", parameters["csi.storage.k8s.io/provisioner-secret-name"])',
    ],
  ];
  for (const [purpose, parameters, error] of cases) {
    deepStrictEqual(
      resolveSecretReference(purpose, input(parameters)),
      { ok: false, error },
      error,
    );
  }
});

Deno.test("resolveSecretReference() mixes a deprecated name key with a new namespace key, as upstream allows", () => {
  deepStrictEqual(
    resolveSecretReference(
      "nodeStage",
      input({ csiNodeStageSecretName: "a", [`${PREFIX}node-stage-secret-namespace`]: "b" }),
    ),
    {
      ok: true,
      value: { name: "a", namespace: "b" },
      warnings: [
        '"csiNodeStageSecretName" is deprecated and will be removed in a future release, please use "csi.storage.k8s.io/node-stage-secret-name" instead',
      ],
    },
  );
});

Deno.test("resolveSecretReference() without a claim (legacy PV deletion) sees only the PV name", () => {
  const parameters = {
    [`${PREFIX}provisioner-secret-name`]: "${pv.name}",
    [`${PREFIX}provisioner-secret-namespace`]: "${pvc.namespace}",
  };
  deepStrictEqual(
    resolveSecretReference("provisioner", { parameters, className: "fast", volumeName: "pvc-1" }),
    {
      ok: false,
      error:
        'error resolving value "${pvc.namespace}": invalid tokens: ["pvc.namespace"] (StorageClass "fast", parameters["csi.storage.k8s.io/provisioner-secret-namespace"])',
    },
  );
});

Deno.test("resolvePvSecretReferences() resolves every purpose but the provisioner's", () => {
  const parameters = {
    [`${PREFIX}secret-name`]: "shared",
    [`${PREFIX}secret-namespace`]: "vault",
    [`${PREFIX}node-publish-secret-name`]: "publish",
    [`${PREFIX}node-publish-secret-namespace`]: "apps",
  };
  const shared = { name: "shared", namespace: "vault" };
  deepStrictEqual(resolvePvSecretReferences(input(parameters)), {
    ok: true,
    value: {
      controllerPublish: shared,
      nodeStage: shared,
      nodePublish: { name: "publish", namespace: "apps" },
      controllerExpand: shared,
      nodeExpand: shared,
      controllerModify: shared,
    },
    warnings: [],
  });
});

Deno.test("resolvePvSecretReferences() gives null for every purpose when the class names no secret", () => {
  deepStrictEqual(resolvePvSecretReferences(input({ kind: "fast" })), {
    ok: true,
    value: NO_PV_SECRETS,
    warnings: [],
  });
  const deprecatedOnly = input({
    kind: "fast",
    csiNodePublishSecretName: "old",
    csiNodePublishSecretNamespace: "vault",
  });
  const resolved = resolvePvSecretReferences(deprecatedOnly);
  deepStrictEqual(resolved.ok && resolved.value.nodePublish, { name: "old", namespace: "vault" });
  deepStrictEqual(resolved.ok && resolved.warnings.length, 2);
});

Deno.test("resolvePvSecretReferences() reports the first bad purpose", () => {
  deepStrictEqual(
    resolvePvSecretReferences(input({ [`${PREFIX}node-expand-secret-name`]: "x" })),
    {
      ok: false,
      error:
        'failed to get name and namespace template from params: either name and namespace for NodeExpand secrets specified, Both must be specified (StorageClass "fast", parameters["csi.storage.k8s.io/node-expand-secret-name"])',
    },
  );
});

Deno.test("deletionSecretAnnotations() is always present, empty without a provisioner secret", () => {
  deepStrictEqual(deletionSecretAnnotations(null), {
    "volume.kubernetes.io/provisioner-deletion-secret-name": "",
    "volume.kubernetes.io/provisioner-deletion-secret-namespace": "",
  });
  deepStrictEqual(deletionSecretAnnotations({ name: "s", namespace: "n" }), {
    "volume.kubernetes.io/provisioner-deletion-secret-name": "s",
    "volume.kubernetes.io/provisioner-deletion-secret-namespace": "n",
  });
});

Deno.test("modifySecretAnnotations() appear only with a controller-modify secret", () => {
  deepStrictEqual(modifySecretAnnotations(null), {});
  deepStrictEqual(modifySecretAnnotations({ name: "m", namespace: "n" }), {
    "volume.kubernetes.io/controller-modify-secret-name": "m",
    "volume.kubernetes.io/controller-modify-secret-namespace": "n",
  });
});

Deno.test("deletionSecretFromAnnotations() tells annotated, secret-less and legacy PVs apart", () => {
  const name = "volume.kubernetes.io/provisioner-deletion-secret-name";
  const namespace = "volume.kubernetes.io/provisioner-deletion-secret-namespace";
  deepStrictEqual(deletionSecretFromAnnotations({ [name]: "s", [namespace]: "n" }), {
    kind: "annotated",
    secret: { name: "s", namespace: "n" },
  });
  deepStrictEqual(deletionSecretFromAnnotations({ [name]: "", [namespace]: "" }), {
    kind: "annotated",
    secret: null,
  });
  deepStrictEqual(deletionSecretFromAnnotations({ [name]: "s" }), { kind: "legacy" });
  deepStrictEqual(deletionSecretFromAnnotations(undefined), { kind: "legacy" });
});

Deno.test("templateAnnotationKeys: the claim annotations a class's secret templates read, and no others", () => {
  deepStrictEqual(
    templateAnnotationKeys({
      [`${PREFIX}provisioner-secret-name`]: "${pvc.annotations['team.example/secret']}-${pvc.name}",
      [`${PREFIX}provisioner-secret-namespace`]: "${pvc.namespace}",
      [`${PREFIX}node-stage-secret-name`]: "$pvc.annotations ${pvc.annotations['a.b/c']}",
      [`${PREFIX}node-stage-secret-namespace`]: "ns",
      "kind": "${pvc.annotations['not.a/secret']}",
    }).sort(),
    ["a.b/c", "team.example/secret"],
  );
  deepStrictEqual(templateAnnotationKeys({ kind: "fast" }), []);
  deepStrictEqual(templateAnnotationKeys(undefined), []);
});
