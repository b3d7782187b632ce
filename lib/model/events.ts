/**
 * A Kubernetes Event as the controllers record it: the object it is about,
 * Normal or Warning, upstream's reason and the message a user reads with
 * `kubectl describe`. lib/kube/events.ts writes them.
 */

/** The object an Event is about. */
export interface EventSubject {
  kind: "PersistentVolumeClaim" | "PersistentVolume" | string;
  apiVersion?: string;
  namespace?: string;
  name: string;
  uid: string;
  resourceVersion?: string;
}

/** Subject of events about a claim. */
export function claimSubject(claim: {
  metadata: { namespace: string; name: string; uid: string; resourceVersion: string };
}): EventSubject {
  return {
    kind: "PersistentVolumeClaim",
    apiVersion: "v1",
    namespace: claim.metadata.namespace,
    name: claim.metadata.name,
    uid: claim.metadata.uid,
    resourceVersion: claim.metadata.resourceVersion,
  };
}

/** An event to record. */
export interface EventRecord {
  subject: EventSubject;
  type: "Normal" | "Warning";
  reason: string;
  message: string;
}

/**
 * The longest Event message written, in UTF-8 bytes: kube-apiserver's own
 * limit on an Event's note (NoteLengthLimit, pkg/apis/core/validation/events.go).
 * Messages embed claim fields and driver errors of any length; a longer one
 * is cut and says so.
 */
export const EVENT_MESSAGE_MAX_BYTES = 1024;
const CUT_MARK = " [...]";

/** The message, cut to EVENT_MESSAGE_MAX_BYTES bytes (on a character boundary) when longer. */
export function capEventMessage(message: string): string {
  // A UTF-16 code unit is at most 3 bytes of UTF-8: most messages need no encoding to know they fit.
  if (message.length * 3 <= EVENT_MESSAGE_MAX_BYTES) return message;
  const bytes = new TextEncoder().encode(message);
  if (bytes.length <= EVENT_MESSAGE_MAX_BYTES) return message;
  const room = EVENT_MESSAGE_MAX_BYTES - CUT_MARK.length;
  // A character cut in half decodes to U+FFFD: drop it.
  const head = new TextDecoder().decode(bytes.subarray(0, room)).replace(/\uFFFD+$/, "");
  return `${head}${CUT_MARK}`;
}
