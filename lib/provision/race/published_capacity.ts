/**
 * The Immediate binding race's own decisions over published capacity
 * (CSIStorageCapacity objects of every node of the driver), beyond
 * upstream's race: how much sooner a roomy node tries, whether this node's
 * own published figure already rules it out, and, when no node can take a
 * claim, the one agent that says so and what it says. Pure.
 */
import type { Segments } from "../../csi/types.ts";
import { formatBinarySI } from "../../model/quantity.ts";
import type { PublishedCapacity } from "../../model/storage_capacity.ts";
import { rendezvous } from "../../model/rendezvous.ts";

/**
 * The most the delay shrinks: a node with room for 4096 or more such
 * volumes waits a quarter of upstream's jittered delay. Shrinking packs the
 * attempts of the roomy nodes into a smaller window, and conflicts grow as
 * the window shrinks (a node tries while another's update is still on its
 * way); the slow logarithm keeps nodes of different sizes apart.
 */
export const MIN_DELAY_FACTOR = 0.25;

/**
 * What upstream's jittered delay is multiplied by: 1 / (1 + log2(free /
 * requested) / 4), at least MIN_DELAY_FACTOR. 1 (upstream's delay) when
 * the volume just fits or the free space is unknown; 1/2 with room for 16
 * such volumes, 1/3 for 256. The result stays within upstream's bounds (it
 * only shortens a delay that is already within them) and keeps its jitter.
 */
export function delayFactor(freeBytes: bigint | undefined, requestBytes: bigint): number {
  if (freeBytes === undefined || requestBytes <= 0n || freeBytes <= requestBytes) return 1;
  const room = Number(freeBytes) / Number(requestBytes);
  return Math.max(MIN_DELAY_FACTOR, 1 / (1 + Math.log2(room) / 4));
}

/** The largest volume an object says fits: its capacity, or maximumVolumeSize when smaller. */
export function offeredBytes(object: PublishedCapacity): bigint | undefined {
  const { capacityBytes, maximumVolumeSizeBytes } = object;
  if (capacityBytes === undefined || maximumVolumeSizeBytes === undefined) return capacityBytes;
  return maximumVolumeSizeBytes < capacityBytes ? maximumVolumeSizeBytes : capacityBytes;
}

/** One publishing node of a class: its segment and the most it offers. */
interface Publisher {
  publisher: string;
  segment: Segments;
  offered: bigint;
}

/** One entry per publisher (a duplicate object counts with its larger figure), sorted by name. */
export function publishers(objects: readonly PublishedCapacity[]): Publisher[] {
  const byName = new Map<string, Publisher>();
  for (const object of objects) {
    const offered = offeredBytes(object) ?? 0n;
    const known = byName.get(object.publisher);
    if (known === undefined || offered > known.offered) {
      byName.set(object.publisher, {
        publisher: object.publisher,
        segment: object.segment,
        offered,
      });
    }
  }
  return [...byName.values()].sort((a, b) => a.publisher < b.publisher ? -1 : 1);
}

/** How a node is named in messages: its segment's values (for a node-local driver, its name). */
export function segmentLabel(segment: Segments): string {
  const values = Object.keys(segment).sort().map((key) => segment[key]);
  return values.length > 0 ? values.join("/") : "(no topology)";
}

/** What the published figures say about a claim that has waited past the max delay. */
type UnplaceableSummary =
  /** No node publishes capacity for the class: each node reports its own decline instead. */
  | { kind: "noPublishers" }
  /** Some node that may race publishes enough: nothing to report. */
  | { kind: "fits" }
  /** Nobody fits: `reporter` (and only it) writes `message` on the claim. */
  | { kind: "report"; reporter: string; message: string };

/** What the summary is computed from. */
interface SummaryInput {
  claimUid: string;
  className: string;
  requestBytes: bigint;
  /** The class's objects, of every node. */
  objects: readonly PublishedCapacity[];
  /** mayRace for a publisher's segment. */
  mayRace: (segment: Segments) => boolean;
}

/**
 * Whether any node that may race has room by its published figures, and if
 * none has, which agent reports it (rendezvous of the claim's uid over the
 * publishers that may race, or over all of them when none may) and the
 * message, e.g. "no node has 5Gi free in class local: largest is node-c
 * with 3Gi (5 nodes publish capacity)".
 */
export function summarizeUnplaceable(input: SummaryInput): UnplaceableSummary {
  const all = publishers(input.objects);
  if (all.length === 0) return { kind: "noPublishers" };
  const allowed = all.filter((candidate) => input.mayRace(candidate.segment));
  if (allowed.some((candidate) => candidate.offered >= input.requestBytes)) return { kind: "fits" };
  const pool = allowed.length > 0 ? allowed : all;
  const reporter = rendezvous(input.claimUid, pool.map((candidate) => candidate.publisher))!;
  const count = `${all.length} ${all.length === 1 ? "node publishes" : "nodes publish"} capacity`;
  if (allowed.length === 0) {
    return {
      kind: "report",
      reporter,
      message: `no node that publishes capacity for class ${input.className} is in its ` +
        `allowedTopologies (${count})`,
    };
  }
  const largest = allowed.reduce((a, b) => b.offered > a.offered ? b : a);
  const inAllowed = allowed.length < all.length
    ? `, ${allowed.length} of them in its allowedTopologies`
    : "";
  return {
    kind: "report",
    reporter,
    message:
      `no node has ${formatBinarySI(input.requestBytes)} free in class ${input.className}: ` +
      `largest is ${segmentLabel(largest.segment)} with ${formatBinarySI(largest.offered)} ` +
      `(${count}${inAllowed})`,
  };
}

/** The Warning one node writes about its own decline when no node publishes capacity. */
export function ownDeclineMessage(
  node: string,
  figures: { className: string; freeBytes: bigint; requestBytes: bigint; source: string },
): string {
  return `node ${node} has ${
    formatBinarySI(figures.freeBytes)
  } free in class ${figures.className} ` +
    `(${figures.source}), the claim requests ${formatBinarySI(figures.requestBytes)}`;
}
