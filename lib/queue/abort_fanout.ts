/**
 * Callbacks run when a signal aborts, on one listener per signal. Workers
 * wait for a key, and the REST and CSI clients make each request, under the
 * same long-lived signal (the agent's shutdown), so adding and removing an
 * event listener per wait would cost more than the wait's own work. Here a
 * subscription is an entry in a set; the signal's one listener runs those
 * left when it aborts. Held per user (a queue, a client): no module state.
 */

/** Cancels a subscription; calling it after the abort, or twice, does nothing. */
export type Unsubscribe = () => void;

const NOTHING: Unsubscribe = () => {};

/** One abort listener per signal, shared by every subscription to it. */
export class AbortFanout {
  readonly #bySignal = new WeakMap<AbortSignal, Set<{ run: () => void }>>();

  /** Runs `callback` once `signal` aborts (now, if it has). */
  subscribe(signal: AbortSignal, callback: () => void): Unsubscribe {
    if (signal.aborted) {
      callback();
      return NOTHING;
    }
    const subscribers = this.#subscribers(signal);
    const entry = { run: callback };
    subscribers.add(entry);
    return () => subscribers.delete(entry);
  }

  #subscribers(signal: AbortSignal): Set<{ run: () => void }> {
    const known = this.#bySignal.get(signal);
    if (known !== undefined) return known;
    const subscribers = new Set<{ run: () => void }>();
    signal.addEventListener("abort", () => {
      const due = [...subscribers];
      subscribers.clear();
      for (const entry of due) entry.run();
    }, { once: true });
    this.#bySignal.set(signal, subscribers);
    return subscribers;
  }
}
