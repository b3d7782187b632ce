/**
 * /healthz and /readyz answers. Liveness is a real CSI Probe round trip,
 * cached for at most a second so that frequent probes cost one CSI call.
 * Readiness is a set of named conditions that later parts of the agent add
 * (CSI handshake done, informers synced, ...).
 */

/** The answer of a health endpoint. */
export interface HealthReport {
  ok: boolean;
  /** One line per check, e.g. "csi: ok" or "informers: not synced". */
  lines: string[];
}

/** Liveness: probes the driver at most once per `maxAgeMs`; concurrent requests share one probe. */
export function createLiveness(
  probe: () => Promise<void>,
  options: { maxAgeMs?: number; now?: () => number } = {},
): () => Promise<HealthReport> {
  const maxAge = options.maxAgeMs ?? 1000;
  const now = options.now ?? Date.now;
  let last: { at: number; report: HealthReport } | undefined;
  let pending: Promise<HealthReport> | undefined;
  const run = async (): Promise<HealthReport> => {
    try {
      await probe();
      return { ok: true, lines: ["csi probe: ok"] };
    } catch (error) {
      return { ok: false, lines: [`csi probe: ${(error as Error).message}`] };
    }
  };
  return () => {
    if (last !== undefined && now() - last.at < maxAge) return Promise.resolve(last.report);
    pending ??= run().then((report) => {
      last = { at: now(), report };
      pending = undefined;
      return report;
    });
    return pending;
  };
}

/** Named readiness conditions; ready when every registered condition is met. */
export class Readiness {
  #conditions = new Map<string, string | true>();

  /** Registers a condition that is not met yet, with the reason shown until it is. */
  require(name: string, waitingFor: string): void {
    if (!this.#conditions.has(name)) this.#conditions.set(name, waitingFor);
  }

  /** Marks a condition met (or not met again, with a reason). */
  set(name: string, state: true | string): void {
    this.#conditions.set(name, state);
  }

  report(): HealthReport {
    const lines = [...this.#conditions].map(([name, state]) =>
      `${name}: ${state === true ? "ok" : state}`
    );
    const ok = [...this.#conditions.values()].every((state) => state === true);
    return { ok: ok && this.#conditions.size > 0, lines };
  }
}
