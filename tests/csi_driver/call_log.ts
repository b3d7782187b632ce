/**
 * The record of every CSI call the driver received, for tests to assert on.
 * Secrets never enter it: their values are replaced, only their keys are kept.
 * Bounded, so a long benchmark cannot grow it without end.
 */
import { statusName } from "./csi_error.ts";
import type { CallRecord, CsiMethod } from "./types.ts";

export const STRIPPED = "***stripped***";
export const DEFAULT_CALL_LOG_LIMIT = 10_000;

export interface CallOutcome {
  code: number;
  message: string;
  durationMs: number;
}

/** Replaces the values of every `secrets` map in a request; returns the keys it saw. */
export function stripSecrets(request: unknown): { request: unknown; secretKeys: string[] } {
  const keys = new Set<string>();
  const strip = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(strip);
    if (typeof value !== "object" || value === null) return value;
    const copy: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(value)) {
      if (key === "secrets" && typeof field === "object" && field !== null) {
        copy[key] = Object.fromEntries(
          Object.keys(field).map((name) => {
            keys.add(name);
            return [name, STRIPPED];
          }),
        );
      } else {
        copy[key] = strip(field);
      }
    }
    return copy;
  };
  const stripped = strip(request);
  return { request: stripped, secretKeys: [...keys].sort() };
}

export class CallLog {
  readonly #limit: number;
  #entries: CallRecord[] = [];
  #seq = 0;

  constructor(options: { limit?: number } = {}) {
    this.#limit = options.limit ?? DEFAULT_CALL_LOG_LIMIT;
  }

  /** Records a call as it arrives (code null until finish), so hung calls show up too. */
  begin(method: CsiMethod, request: unknown, now: Date): CallRecord {
    const entry: CallRecord = {
      seq: ++this.#seq,
      method,
      time: now.toISOString(),
      ...stripSecrets(request),
      code: null,
      codeName: null,
      message: "",
      durationMs: null,
    };
    this.#entries.push(entry);
    // Trimming in batches keeps recording O(1) amortized.
    if (this.#entries.length > this.#limit + Math.ceil(this.#limit / 4)) {
      this.#entries = this.#entries.slice(-this.#limit);
    }
    return entry;
  }

  finish(entry: CallRecord, outcome: CallOutcome): void {
    entry.code = outcome.code;
    entry.codeName = statusName(outcome.code);
    entry.message = outcome.message;
    entry.durationMs = outcome.durationMs;
  }

  /** The most recent calls (at most the limit), oldest first. */
  list(method?: CsiMethod): CallRecord[] {
    const recent = this.#entries.slice(-this.#limit);
    const chosen = method === undefined
      ? recent
      : recent.filter((entry) => entry.method === method);
    return chosen.map((entry) => structuredClone(entry));
  }

  clear(): void {
    this.#entries = [];
  }
}
