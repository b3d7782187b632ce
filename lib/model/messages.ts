/**
 * How problems with the user's objects are worded, the same on every path:
 * where a problem was found, appended to upstream's error text so that an
 * operator reading the Event knows which object and field to fix
 * (`<upstream message> (StorageClass "fast", parameters["csi.storage.k8s.io/foo"])`),
 * and upstream's warning for a deprecated parameter key.
 */

/** `(PersistentVolumeClaim "ns/name", <field>)` appended to a message. */
export function atClaim(
  message: string,
  claim: { metadata: { namespace: string; name: string } },
  field: string,
): string {
  return `${message} (PersistentVolumeClaim "${claim.metadata.namespace}/${claim.metadata.name}", ${field})`;
}

/** `(StorageClass "name", <field>)` appended to a message. */
export function atClass(message: string, className: string, field: string): string {
  return `${message} (StorageClass ${JSON.stringify(className)}, ${field})`;
}

/** The field path of one StorageClass parameter: `parameters["key"]`. */
export function parameterField(key: string): string {
  return `parameters[${JSON.stringify(key)}]`;
}

/** Upstream's deprecation warning for an old parameter key. */
export function deprecationWarning(deprecatedKey: string, newKey: string): string {
  return `"${deprecatedKey}" is deprecated and will be removed in a future release, please use "${newKey}" instead`;
}
