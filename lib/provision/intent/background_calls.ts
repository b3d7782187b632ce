/**
 * CreateVolume calls that went to the background: they timed out, were
 * cancelled or unanswered (classifyCreateError's "inBackground"), so the
 * driver may still finish them. A later call of the same volume that fails
 * for good (ResourceExhausted, say) says nothing about the earlier one, so
 * its intent is kept until the volume is settled. Each mark lives as long
 * as the intent it was made under: it holds the intent's `since`, which a
 * new intent of the same name does not share.
 */
import { CsiError } from "../../csi/status.ts";
import { classifyCreateError } from "../outcome.ts";
import type { Journal } from "../ports.ts";

/** Volume names whose CreateVolume may still be running in the driver. */
export class BackgroundCalls {
  readonly #journal: Pick<Journal, "get">;
  /** Volume name → `since` of the intent the call was made under. */
  readonly #marks = new Map<string, string>();

  constructor(journal: Pick<Journal, "get">) {
    this.#journal = journal;
  }

  /** Notes a failed CreateVolume of `pvName`: marked when the driver may still finish it. */
  noteFailure(pvName: string, error: unknown): void {
    const code = error instanceof CsiError ? error.codeName : "not a gRPC status";
    if (classifyCreateError(code, { mayReschedule: false }) !== "inBackground") return;
    const since = this.#journal.get(pvName)?.since;
    if (since === undefined) return;
    this.#dropEnded();
    this.#marks.set(pvName, since);
  }

  /** Whether a CreateVolume of the intent's volume went to the background while it lived. */
  mayStillRun(pvName: string): boolean {
    const since = this.#marks.get(pvName);
    return since !== undefined && this.#journal.get(pvName)?.since === since;
  }

  /** Marks whose intent ended; cheap, as marks are made only on failures. */
  #dropEnded(): void {
    for (const pvName of this.#marks.keys()) {
      if (!this.mayStillRun(pvName)) this.#marks.delete(pvName);
    }
  }
}
