/**
 * csi_node_provisioner_bounded_*: the size, limit and evictions of every
 * bounded collection (lib/queue/bounded.ts), one `collection` label each.
 * Any part of the agent may ask for an observer on the same registry: the
 * families are created once per registry and shared.
 */
import { Counter, Gauge, type Registry } from "prom-client";
import type { BoundObserver } from "./bounded.ts";

const ENTRIES = "csi_node_provisioner_bounded_entries";
const LIMIT = "csi_node_provisioner_bounded_limit";
const EVICTIONS = "csi_node_provisioner_bounded_evictions_total";

/** Makes observers of named bounded collections that report into `registry`. */
export type BoundFactory = (collection: string, limit: number) => BoundObserver;

/**
 * The entries gauge: each collection's latest size is kept in a plain map and
 * handed to prom-client when the registry is read, since prom-client hashes
 * the labels at every set and the Event buffer's size changes with every
 * Event.
 */
class EntriesGauge extends Gauge<"collection"> {
  readonly latest = new Map<string, number>();

  constructor(registry: Registry) {
    super({
      name: ENTRIES,
      help:
        "Entries in a bounded collection of the agent (infeasible_claims, misplaced_source_claims, refused_volumes, event_buffer, event_history, capacity_writes, unknown_class_claims).",
      labelNames: ["collection"] as const,
      registers: [registry],
      collect(this: Gauge<"collection">) {
        for (const [collection, count] of (this as EntriesGauge).latest) {
          this.set({ collection }, count);
        }
      },
    });
  }
}

/** The observer factory of `registry`. */
export function boundedMetrics(registry: Registry): BoundFactory {
  const entries = (registry.getSingleMetric(ENTRIES) as EntriesGauge | undefined) ??
    new EntriesGauge(registry);
  const limits = (registry.getSingleMetric(LIMIT) as Gauge<"collection"> | undefined) ??
    new Gauge({
      name: LIMIT,
      help: "The most entries a bounded collection of the agent holds.",
      labelNames: ["collection"] as const,
      registers: [registry],
    });
  const evictions = (registry.getSingleMetric(EVICTIONS) as Counter<"collection"> | undefined) ??
    new Counter({
      name: EVICTIONS,
      help:
        "Entries a bounded collection dropped because it was full (the oldest memo, or for event_buffer and unknown_class_claims the new entry).",
      labelNames: ["collection"] as const,
      registers: [registry],
    });
  return (collection, limit) => {
    limits.set({ collection }, limit);
    entries.latest.set(collection, 0);
    evictions.inc({ collection }, 0);
    return {
      size: (count) => entries.latest.set(collection, count),
      evicted: () => evictions.inc({ collection }),
    };
  };
}
