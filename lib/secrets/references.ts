/**
 * Secret references named by StorageClass parameters (`getSecretReference`
 * and `verifyAndGetSecretNameAndNamespaceTemplate` in upstream's
 * controller.go). Only the provisioner secret is read by the agent (its data
 * goes into CreateVolumeRequest.secrets); the other purposes become secret
 * references on the PV for the attacher, kubelet, resizer and modifier.
 */
import { CSI_PARAMETER_PREFIX } from "../model/keys.ts";
import type { SecretReference } from "../model/objects.ts";
import { atClass, deprecationWarning, parameterField } from "../model/messages.ts";
import { expandTemplate, goQuoteList, isDns1123Label, isDns1123Subdomain } from "./template.ts";

/** Which operation a secret is for. */
export type SecretPurpose =
  | "provisioner"
  | "controllerPublish"
  | "nodeStage"
  | "nodePublish"
  | "controllerExpand"
  | "nodeExpand"
  | "controllerModify";

interface SecretKeys {
  /** Upstream's name of the purpose, as it appears in error messages. */
  label: string;
  name: string;
  namespace: string;
  deprecatedName?: string;
  deprecatedNamespace?: string;
}

const P = CSI_PARAMETER_PREFIX;

const SECRET_KEYS: Readonly<Record<SecretPurpose | "default", SecretKeys>> = {
  default: { label: "Default", name: `${P}secret-name`, namespace: `${P}secret-namespace` },
  provisioner: {
    label: "Provisioner",
    name: `${P}provisioner-secret-name`,
    namespace: `${P}provisioner-secret-namespace`,
    deprecatedName: "csiProvisionerSecretName",
    deprecatedNamespace: "csiProvisionerSecretNamespace",
  },
  controllerPublish: {
    label: "ControllerPublish",
    name: `${P}controller-publish-secret-name`,
    namespace: `${P}controller-publish-secret-namespace`,
    deprecatedName: "csiControllerPublishSecretName",
    deprecatedNamespace: "csiControllerPublishSecretNamespace",
  },
  nodeStage: {
    label: "NodeStage",
    name: `${P}node-stage-secret-name`,
    namespace: `${P}node-stage-secret-namespace`,
    deprecatedName: "csiNodeStageSecretName",
    deprecatedNamespace: "csiNodeStageSecretNamespace",
  },
  nodePublish: {
    label: "NodePublish",
    name: `${P}node-publish-secret-name`,
    namespace: `${P}node-publish-secret-namespace`,
    deprecatedName: "csiNodePublishSecretName",
    deprecatedNamespace: "csiNodePublishSecretNamespace",
  },
  controllerExpand: {
    label: "ControllerExpand",
    name: `${P}controller-expand-secret-name`,
    namespace: `${P}controller-expand-secret-namespace`,
  },
  nodeExpand: {
    label: "NodeExpand",
    name: `${P}node-expand-secret-name`,
    namespace: `${P}node-expand-secret-namespace`,
  },
  controllerModify: {
    label: "ControllerModify",
    name: `${P}controller-modify-secret-name`,
    namespace: `${P}controller-modify-secret-namespace`,
  },
};

/** What the templates may refer to. */
export interface SecretTemplateInput {
  /** The StorageClass parameters. */
  parameters: Record<string, string> | undefined;
  /** The StorageClass name, for error messages. */
  className: string;
  /** `${pv.name}`. */
  volumeName: string;
  /**
   * `${pvc.name}`, `${pvc.namespace}` and `${pvc.annotations['key']}`.
   * Absent when deleting a legacy PV whose claim is gone.
   */
  claim?: { name: string; namespace: string; annotations?: Record<string, string> | undefined };
}

/** A reference (null when the class names none), or a located error message. */
type SecretRefResult =
  | { ok: true; value: SecretReference | null; warnings: string[] }
  | { ok: false; error: string };

/** Every parameter key that names a secret, of any purpose or the default pair. */
const SECRET_PARAMETER_KEYS: ReadonlySet<string> = new Set(
  Object.values(SECRET_KEYS).flatMap((keys) =>
    [keys.name, keys.namespace, keys.deprecatedName, keys.deprecatedNamespace]
      .filter((key): key is string => key !== undefined)
  ),
);

/**
 * Whether the class parameters name no secret at all, as most classes do:
 * then every purpose resolves to no secret and nothing is warned, without
 * looking for each purpose's templates (a claim resolves seven purposes).
 */
function namesNoSecret(parameters: Record<string, string>): boolean {
  for (const key in parameters) if (SECRET_PARAMETER_KEYS.has(key)) return false;
  return true;
}

const ANNOTATION_TOKEN = /^pvc\.annotations\['(.*)'\]$/s;

/**
 * The claim annotation keys the class's secret name templates read
 * (`${pvc.annotations['key']}`): the only annotations of a claim, beyond the
 * fixed ones, that provisioning needs.
 */
export function templateAnnotationKeys(parameters: Record<string, string> | undefined): string[] {
  const keys = new Set<string>();
  if (parameters === undefined || namesNoSecret(parameters)) return [];
  for (const [parameter, template] of Object.entries(parameters)) {
    if (!SECRET_PARAMETER_KEYS.has(parameter)) continue;
    // With no values at all, every token the template names comes back as missing.
    const expanded = expandTemplate(template, {});
    for (const token of expanded.ok ? [] : expanded.missing) {
      const key = ANNOTATION_TOKEN.exec(token)?.[1];
      if (key !== undefined) keys.add(key);
    }
  }
  return [...keys];
}

type Templates =
  | { ok: true; name: string; namespace: string; nameKey: string; namespaceKey: string }
  | { ok: true; name: undefined }
  | { ok: false; message: string; keys: string[] };

/**
 * Resolves the secret of one purpose: its own keys, else the default
 * `secret-name`/`secret-namespace` pair, expanded and validated.
 */
export function resolveSecretReference(
  purpose: SecretPurpose,
  input: SecretTemplateInput,
): SecretRefResult {
  const parameters = input.parameters ?? {};
  const warnings: string[] = [];
  if (namesNoSecret(parameters)) return { ok: true, value: null, warnings };
  let templates = findTemplates(SECRET_KEYS[purpose], parameters, warnings);
  let prefix = "failed to get name and namespace template from params: ";
  if (templates.ok && templates.name === undefined) {
    templates = findTemplates(SECRET_KEYS.default, parameters, warnings);
    prefix = "failed to get default name and namespace template from params: ";
  }
  if (!templates.ok) {
    return {
      ok: false,
      error: atClass(prefix + templates.message, input.className, fields(templates.keys)),
    };
  }
  if (templates.name === undefined) return { ok: true, value: null, warnings };
  const namespace = resolveNamespace(templates.namespace, input);
  if (!namespace.ok) {
    return {
      ok: false,
      error: atClass(namespace.error, input.className, parameterField(templates.namespaceKey)),
    };
  }
  const name = resolveName(templates.name, input);
  if (!name.ok) {
    return {
      ok: false,
      error: atClass(name.error, input.className, parameterField(templates.nameKey)),
    };
  }
  return { ok: true, value: { name: name.value, namespace: namespace.value }, warnings };
}

/**
 * Upstream's message for a provisioner Secret that could not be read, located
 * at the class parameters that named it (the purpose's keys, or the default
 * pair they fell back to), so that the user knows what to fix.
 */
export function secretReadError(
  ref: SecretReference,
  error: string,
  input: Pick<SecretTemplateInput, "parameters" | "className">,
): string {
  const message = `error getting secret ${ref.name} in namespace ${ref.namespace}: ${error}`;
  const parameters = input.parameters ?? {};
  let templates = findTemplates(SECRET_KEYS.provisioner, parameters, []);
  if (templates.ok && templates.name === undefined) {
    templates = findTemplates(SECRET_KEYS.default, parameters, []);
  }
  if (!templates.ok || templates.name === undefined) return message;
  return atClass(message, input.className, fields([templates.nameKey, templates.namespaceKey]));
}

/** The name and namespace templates of one purpose, checked as upstream checks them. */
function findTemplates(
  keys: SecretKeys,
  parameters: Record<string, string>,
  warnings: string[],
): Templates {
  const present = (key: string | undefined): key is string =>
    key !== undefined && Object.hasOwn(parameters, key);
  const nameKeys = [keys.deprecatedName, keys.name].filter(present);
  const namespaceKeys = [keys.deprecatedNamespace, keys.namespace].filter(present);
  for (
    const [old, current] of [[keys.deprecatedName, keys.name], [
      keys.deprecatedNamespace,
      keys.namespace,
    ]]
  ) {
    if (present(old) && current !== undefined) warnings.push(deprecationWarning(old, current));
  }
  const nameKey = nameKeys.at(-1);
  const namespaceKey = namespaceKeys.at(-1);
  if (nameKeys.length > 1 || namespaceKeys.length > 1) {
    const message = `${keys.label} secrets specified in parameters with both "csi" and "${P}" keys`;
    // Only the doubled pairs: a single namespace key next to doubled name keys is not at fault.
    const doubled = [nameKeys, namespaceKeys].filter((pair) => pair.length > 1).flat();
    return { ok: false, message, keys: doubled };
  }
  if (nameKey === undefined && namespaceKey === undefined) return { ok: true, name: undefined };
  if (nameKey === undefined || namespaceKey === undefined) {
    const message =
      `either name and namespace for ${keys.label} secrets specified, Both must be specified`;
    return { ok: false, message, keys: [nameKey ?? namespaceKey ?? ""] };
  }
  const name = parameters[nameKey] ?? "";
  const namespace = parameters[namespaceKey] ?? "";
  if (name === "" || namespace === "") {
    const message =
      `${keys.label} secrets specified in parameters but value of either namespace or name is empty`;
    return { ok: false, message, keys: [nameKey, namespaceKey] };
  }
  return { ok: true, name, namespace, nameKey, namespaceKey };
}

function fields(keys: string[]): string {
  return keys.map(parameterField).join(" and ");
}

type Resolved = { ok: true; value: string } | { ok: false; error: string };

/** Namespace templates see only what the claim's user cannot choose: the PV name and the claim namespace. */
function resolveNamespace(template: string, input: SecretTemplateInput): Resolved {
  const values: Record<string, string> = { "pv.name": input.volumeName };
  if (input.claim !== undefined) values["pvc.namespace"] = input.claim.namespace;
  return resolve(template, values, { valid: isDns1123Label, what: "namespace name" });
}

/** Name templates may also use the claim name and its annotations. */
function resolveName(template: string, input: SecretTemplateInput): Resolved {
  const values: Record<string, string> = { "pv.name": input.volumeName };
  if (input.claim !== undefined) {
    values["pvc.name"] = input.claim.name;
    values["pvc.namespace"] = input.claim.namespace;
    for (const [key, value] of Object.entries(input.claim.annotations ?? {})) {
      values[`pvc.annotations['${key}']`] = value;
    }
  }
  return resolve(template, values, { valid: isDns1123Subdomain, what: "secret name" });
}

function resolve(
  template: string,
  values: Record<string, string>,
  check: { valid: (value: string) => boolean; what: string },
): Resolved {
  const expanded = expandTemplate(template, values);
  const quoted = JSON.stringify(template);
  if (!expanded.ok) {
    return {
      ok: false,
      error: `error resolving value ${quoted}: invalid tokens: ${goQuoteList(expanded.missing)}`,
    };
  }
  if (check.valid(expanded.value)) return { ok: true, value: expanded.value };
  if (expanded.value !== template) {
    return {
      ok: false,
      error: `${quoted} resolved to ${
        JSON.stringify(expanded.value)
      } which is not a valid ${check.what}`,
    };
  }
  return { ok: false, error: `${quoted} is not a valid ${check.what}` };
}

/** The secret references a PV carries, one per purpose other than the provisioner's. */
export type PvSecretReferences = Record<
  Exclude<SecretPurpose, "provisioner">,
  SecretReference | null
>;

const PV_PURPOSES = [
  "controllerPublish",
  "nodeStage",
  "nodePublish",
  "controllerExpand",
  "nodeExpand",
  "controllerModify",
] as const;

/** Resolves every PV secret reference, in upstream's order; the first error wins. */
export function resolvePvSecretReferences(
  input: SecretTemplateInput,
): { ok: true; value: PvSecretReferences; warnings: string[] } | { ok: false; error: string } {
  const value: Partial<PvSecretReferences> = {};
  const warnings: string[] = [];
  if (namesNoSecret(input.parameters ?? {})) {
    for (const purpose of PV_PURPOSES) value[purpose] = null;
    return { ok: true, value: value as PvSecretReferences, warnings };
  }
  for (const purpose of PV_PURPOSES) {
    const resolved = resolveSecretReference(purpose, input);
    if (!resolved.ok) return resolved;
    value[purpose] = resolved.value;
    warnings.push(...resolved.warnings);
  }
  return { ok: true, value: value as PvSecretReferences, warnings };
}
