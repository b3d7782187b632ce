/**
 * Metric label values that come from what users write: a claim's class
 * name, its data source's kind. Each distinct value is a series kept for the
 * life of the process, so a value no cluster object vouches for is reported
 * as "other": no tenant can create series without bound.
 */

/** The label value of anything a tenant named that the agent does not know. */
export const OTHER_LABEL_VALUE = "other";

/** The data source kinds the agent provisions from, and "" for none. */
const SOURCE_KINDS: ReadonlySet<string> = new Set(["", "PersistentVolumeClaim", "VolumeSnapshot"]);

/** A StorageClass name while that class exists, else "other". */
export function classLabel(name: string, exists: (name: string) => boolean): string {
  return name !== "" && exists(name) ? name : OTHER_LABEL_VALUE;
}

/** A data source kind the agent provisions from, or "" for none, else "other". */
export function sourceLabel(kind: string): string {
  return SOURCE_KINDS.has(kind) ? kind : OTHER_LABEL_VALUE;
}
