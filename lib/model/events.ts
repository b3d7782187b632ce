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

/** An event to record. */
export interface EventRecord {
  subject: EventSubject;
  type: "Normal" | "Warning";
  reason: string;
  message: string;
}
