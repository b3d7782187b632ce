/** Polling with a deadline, for conditions no watch is worth setting up for. */

export interface WaitOptions {
  /** What is being waited for; used in the timeout error. */
  description: string;
  timeoutMs?: number;
  intervalMs?: number;
  signal?: AbortSignal;
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts. */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Calls `probe` until it returns a value other than undefined/false, and
 * returns that value. A probe that throws counts as "not yet"; its last error
 * is reported if the deadline passes.
 */
export async function waitFor<T>(
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  options: WaitOptions,
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const intervalMs = options.intervalMs ?? 100;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (true) {
    options.signal?.throwIfAborted();
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) {
      const cause = lastError === undefined ? "" : `; last error: ${describeError(lastError)}`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${options.description}${cause}`);
    }
    await delay(intervalMs, options.signal);
  }
}

/** A one-line description of anything thrown, including client-node ApiExceptions. */
export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const body = (error as { body?: unknown }).body;
    return body === undefined ? error.message : `${error.message} ${JSON.stringify(body)}`;
  }
  return String(error);
}

/** Resolves like `promise`, or rejects when it has not settled within `timeoutMs`. */
export async function withTimeout<T>(
  promise: Promise<T>,
  options: { timeoutMs: number; description: string },
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(`timed out after ${options.timeoutMs} ms waiting for ${options.description}`),
        ),
      options.timeoutMs,
    );
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
