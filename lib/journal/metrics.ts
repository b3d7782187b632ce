/**
 * The journal's metrics (this agent's own, no upstream equivalent):
 * entries waiting, how entries ended, files set aside, failed writes, and the
 * age of the oldest entry (an entry normally lives for one CreateVolume and
 * one PV save; an old one means a volume this agent cannot finish or clean up).
 */
import { Counter, Gauge, type Registry } from "prom-client";

/** What the journal reports as it works. */
export interface JournalMetrics {
  settled(outcome: string): void;
  setAside(): void;
  writeFailed(): void;
  /** Reads the entry count and the oldest entry from this journal at each scrape. */
  observe(journal: { size: number; oldestSince(): string | undefined }): void;
  /** Reads at each scrape whether new intents can be written now. */
  observeWritable(writable: () => boolean): void;
  /** The journal's directory is in memory (tmpfs, ramfs): a node reboot wipes it. */
  volatile(inMemory: boolean): void;
}

/** Creates the metrics in `registry`. */
export function createJournalMetrics(
  registry: Registry,
  options: { now?: () => number } = {},
): JournalMetrics {
  const now = options.now ?? Date.now;
  let source: { size: number; oldestSince(): string | undefined } | undefined;
  let writable: () => boolean = () => false;
  new Gauge({
    name: "csi_node_provisioner_journal_writable",
    help: "1 when the intent journal is locked, loaded and its last write succeeded; 0 while " +
      "it waits for its lock, cannot be read or cannot be written (no volume is created then).",
    registers: [registry],
    collect() {
      this.set(writable() ? 1 : 0);
    },
  });
  const volatile = new Gauge({
    name: "csi_node_provisioner_journal_volatile",
    help: "1 when the intent journal's directory is in memory (tmpfs or ramfs): a node reboot " +
      "wipes it, and with it the record of volumes being created.",
    registers: [registry],
  });
  new Gauge({
    name: "csi_node_provisioner_journal_entries",
    help:
      "CreateVolume intents in the journal whose volume has neither a saved PV nor been deleted.",
    registers: [registry],
    collect() {
      this.set(source?.size ?? 0);
    },
  });
  new Gauge({
    name: "csi_node_provisioner_journal_oldest_entry_age_seconds",
    help: "Age of the oldest intent in the journal, 0 when it is empty.",
    registers: [registry],
    collect() {
      const oldest = source?.oldestSince();
      this.set(oldest === undefined ? 0 : Math.max(0, (now() - Date.parse(oldest)) / 1000));
    },
  });
  const settled = new Counter({
    name: "csi_node_provisioner_journal_settled_total",
    help:
      "Intents cleared from the journal, by outcome: pv_saved, pv_exists, volume_deleted, no_volume.",
    labelNames: ["outcome"],
    registers: [registry],
  });
  const setAside = new Counter({
    name: "csi_node_provisioner_journal_set_aside_total",
    help: "Journal files that could not be read and were set aside (renamed *.corrupt-<time>).",
    registers: [registry],
  });
  const writeFailures = new Counter({
    name: "csi_node_provisioner_journal_write_failures_total",
    help: "Journal writes that failed (a CreateVolume is sent only once its intent is written).",
    registers: [registry],
  });
  return {
    settled: (outcome) => settled.inc({ outcome }),
    setAside: () => setAside.inc(),
    writeFailed: () => writeFailures.inc(),
    observe: (journal) => (source = journal),
    observeWritable: (state) => (writable = state),
    volatile: (inMemory) => volatile.set(inMemory ? 1 : 0),
  };
}
