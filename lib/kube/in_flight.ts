/**
 * A bound on the requests in flight at once. Bun's fetch speaks HTTP/1.1 to
 * kube-apiserver: one TCP and TLS connection per concurrent request, kept
 * alive for reuse. Unbounded, a burst of 100 workers opened up to 108
 * connections at once and 188 in all during 1000 provisions, each a TLS
 * handshake for the agent and for kube-apiserver. client-go multiplexes
 * every request over one HTTP/2 connection; holding the requests (not the
 * watches, which stay open) to a few connections is the closest HTTP/1.1 gets.
 */

/** Held slots; waiters are served in arrival order. */
export class InFlightLimit {
  readonly #limit: number;
  #held = 0;
  readonly #waiting: { grant: () => void }[] = [];

  constructor(limit: number) {
    if (!(limit >= 1)) throw new RangeError(`in-flight limit must be at least 1, not ${limit}`);
    this.#limit = limit;
  }

  /** Slots held now. */
  get held(): number {
    return this.#held;
  }

  /** Resolves with the release of a slot; rejects with the signal's reason if it aborts first. */
  acquire(signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    if (this.#held < this.#limit) {
      this.#held++;
      return Promise.resolve(this.#releaser());
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve(this.#releaser());
        },
      };
      const onAbort = () => {
        this.#waiting.splice(this.#waiting.indexOf(waiter), 1);
        reject(signal?.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#waiting.push(waiter);
    });
  }

  /** Runs `work` holding a slot. */
  async run<T>(work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const release = await this.acquire(signal);
    try {
      return await work();
    } finally {
      release();
    }
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiting.shift();
      // The slot passes straight to the next waiter: held stays the same.
      if (next !== undefined) next.grant();
      else this.#held--;
    };
  }
}
