/**
 * The node's one topology segment, as published in nodeTopology. Upstream
 * builds it in Go map order (cmd/csi-provisioner, the fixed segment of
 * node mode), so with more than one key its Compare may not match; here the keys are
 * sorted, so the same segment always prints, compares and serializes the
 * same way. Comparison of a selector ignores key order, as Go's DeepEqual of
 * maps does, so objects written by upstream in any order are still adopted.
 */
import type { Segments } from "../../csi/types.ts";
import type { LabelSelector } from "../../model/objects.ts";

/** The segment with its keys in sorted order. */
export function sortedSegment(segment: Segments): Segments {
  const sorted: Segments = {};
  for (const key of Object.keys(segment).sort()) sorted[key] = segment[key] ?? "";
  return sorted;
}

/** The nodeTopology selector of the segment's objects. */
export function nodeTopology(segment: Segments): LabelSelector {
  return { matchLabels: sortedSegment(segment) };
}

/** Whether an object's nodeTopology is exactly the segment's selector (labels only, no expressions). */
export function selectsSegment(selector: LabelSelector | undefined, segment: Segments): boolean {
  if (selector === undefined) return false;
  if ((selector.matchExpressions ?? []).length > 0) return false;
  const labels = selector.matchLabels ?? {};
  const keys = Object.keys(labels);
  if (keys.length !== Object.keys(segment).length) return false;
  return keys.every((key) => Object.hasOwn(segment, key) && segment[key] === labels[key]);
}
