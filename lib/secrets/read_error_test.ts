import { deepStrictEqual } from "node:assert/strict";
import { secretReadError } from "./references.ts";
import { CSI_PARAMETER_PREFIX as PREFIX } from "../model/keys.ts";

Deno.test("secretReadError() is upstream's message, located at the keys that named the Secret", () => {
  const error = 'secrets "creds" not found';
  const ref = { name: "creds", namespace: "apps" };
  const upstream = 'error getting secret creds in namespace apps: secrets "creds" not found';
  const cases: [Record<string, string>, string][] = [
    [
      {
        [`${PREFIX}provisioner-secret-name`]: "creds",
        [`${PREFIX}provisioner-secret-namespace`]: "apps",
      },
      `${upstream} (StorageClass "fast", parameters["${PREFIX}provisioner-secret-name"] and ` +
      `parameters["${PREFIX}provisioner-secret-namespace"])`,
    ],
    [
      { csiProvisionerSecretName: "creds", csiProvisionerSecretNamespace: "apps" },
      `${upstream} (StorageClass "fast", parameters["csiProvisionerSecretName"] and ` +
      `parameters["csiProvisionerSecretNamespace"])`,
    ],
    [
      { [`${PREFIX}secret-name`]: "creds", [`${PREFIX}secret-namespace`]: "apps" },
      `${upstream} (StorageClass "fast", parameters["${PREFIX}secret-name"] and ` +
      `parameters["${PREFIX}secret-namespace"])`,
    ],
    // The class changed since the reference was resolved: no location rather than a wrong one.
    [{ kind: "fast" }, upstream],
  ];
  for (const [parameters, expected] of cases) {
    deepStrictEqual(secretReadError(ref, error, { parameters, className: "fast" }), expected);
  }
});
