/**
 * The start gate of every controller: no worker runs before every cache it
 * reads has listed once (client-go's WaitForCacheSync), so that no decision
 * is made on a partial cache; an attach guard that reads an empty
 * VolumeAttachment cache would delete a volume still attached.
 */
import { sleep } from "./sleep.ts";

/** A cache that knows whether it has listed once. */
export interface Synced {
  hasSynced(): boolean;
}

const CHECK_MS = 50;

/** Waits until every cache listed once; false when `signal` aborted first. */
export async function waitForSync(caches: Iterable<Synced>, signal: AbortSignal): Promise<boolean> {
  const all = [...caches];
  while (!all.every((cache) => cache.hasSynced())) {
    if (!(await sleep(CHECK_MS, signal))) return false;
  }
  return true;
}
