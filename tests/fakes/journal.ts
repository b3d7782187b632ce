/** An in-memory intent journal for unit tests: what was recorded and cleared, in order. */
import { type Intent, intentKey, type IntentOutcome } from "../../lib/provision/intent/intent.ts";
import type { Journal } from "../../lib/provision/ports.ts";

export class MemoryJournal implements Journal {
  readonly #entries = new Map<string, Intent>();
  /** Every record and clear, e.g. "record pvc-1", "clear pvc-1 pv_saved". */
  readonly log: string[] = [];
  /** Intents marked as being settled (and not recorded again since). */
  readonly settlingKeys = new Set<string>();
  /** The next records fail with this error while set. */
  failRecords: Error | undefined;

  constructor(intents: Intent[] = []) {
    for (const intent of intents) this.#entries.set(intent.pvName, structuredClone(intent));
  }

  record(intent: Intent): Promise<void> {
    if (this.failRecords !== undefined) return Promise.reject(this.failRecords);
    this.#entries.set(intent.pvName, structuredClone(intent));
    this.settlingKeys.delete(intent.pvName);
    this.log.push(`record ${intent.pvName}`);
    return Promise.resolve();
  }

  settling(pvName: string): void {
    if (this.#entries.has(pvName)) this.settlingKeys.add(pvName);
  }

  clear(pvName: string, outcome: IntentOutcome): void {
    this.settlingKeys.delete(pvName);
    if (this.#entries.delete(pvName)) this.log.push(`clear ${pvName} ${outcome}`);
  }

  entries(): Intent[] {
    return [...this.#entries.values()].map((intent) => structuredClone(intent));
  }

  get(pvName: string): Intent | undefined {
    return this.#entries.get(pvName);
  }

  entriesOf(claimKey: string): Intent[] {
    return this.entries().filter((intent) => intentKey(intent) === claimKey);
  }

  get size(): number {
    return this.#entries.size;
  }
}
