/**
 * The agent's periodic collection on this runtime (platform.ts), each run
 * logged at debug level with its duration and the heap before and after.
 */
import type { Logger } from "../log/logger.ts";
import { type CollectionReport, PeriodicCollection } from "./collection.ts";
import { footprintShrink, fullCollection, heapUsedBytes } from "./platform.ts";

/** The periodic collection, or undefined where the runtime offers none (Deno in development). */
export function loggedCollection(logger: Logger): PeriodicCollection | undefined {
  const collect = fullCollection();
  if (collect === undefined) return undefined;
  return new PeriodicCollection({
    collect,
    shrink: footprintShrink(),
    heapUsed: heapUsedBytes,
    onCollected: (report) => logger.debug(collectionLogFields(report), "Full garbage collection"),
  });
}

/** A report as the log shows it: milliseconds to a tenth, the heap in MiB to a tenth. */
export function collectionLogFields(report: CollectionReport): Record<string, unknown> {
  const { ms, kind, heapBeforeBytes, heapAfterBytes } = report;
  return {
    ms: Math.round(ms * 10) / 10,
    kind,
    heapBeforeMiB: mebibytes(heapBeforeBytes),
    heapAfterMiB: mebibytes(heapAfterBytes),
  };
}

function mebibytes(bytes: number | undefined): number | undefined {
  return bytes === undefined ? undefined : Math.round(bytes / 104857.6) / 10;
}
