/** Waiting that shutdown can interrupt. */

/** Waits `ms`; resolves true when the time passed, false as soon as `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (slept: boolean) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      resolve(slept);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Runs `round` every `periodMs` until `signal` aborts; a round that throws
 * (while not stopping) goes to `failed`, and the next one runs as planned.
 */
export async function everyPeriod(
  periodMs: number,
  signal: AbortSignal,
  round: (signal: AbortSignal) => Promise<void>,
  failed: (error: unknown) => void,
): Promise<void> {
  while (await sleep(periodMs, signal)) {
    try {
      await round(signal);
    } catch (error) {
      if (signal.aborted) return;
      failed(error);
    }
  }
}
