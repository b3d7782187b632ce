/**
 * Copies of CSI messages that are safe to log: every `secrets` map is
 * replaced, the way csi-lib-utils' protosanitizer does it in the Go sidecars.
 */

/** What replaces a secret field. */
export const STRIPPED = "***stripped***";

/** Returns a deep copy of a CSI message with every field named `secrets` stripped. */
export function sanitizeCsiMessage(message: unknown): unknown {
  if (Array.isArray(message)) return message.map(sanitizeCsiMessage);
  if (message === null || typeof message !== "object") return message;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(message)) {
    copy[key] = key === "secrets" && value !== null && value !== undefined
      ? STRIPPED
      : sanitizeCsiMessage(value);
  }
  return copy;
}
