/**
 * The wait of an informer before its next pass. After a lost connection (no
 * HTTP answer at all), an answer the API server gives any other request of
 * the same client meanwhile (it is back from a restart) ends the wait early:
 * the informer tries again after a base delay, jittered, instead of sitting
 * out a backoff of up to 30 s while the agent could work. Not after an error
 * status: that server was there and refused this informer.
 */
import type { Logger } from "../../log/logger.ts";
import { type BackoffBounds, jitteredDelay } from "../../queue/backoff.ts";
import { sleep } from "../../runtime/sleep.ts";

/** Waits `delayMs`, or less once `answered` resolves; resolves early when `signal` aborts. */
export async function waitBeforeRetry(delayMs: number, options: {
  signal: AbortSignal;
  /** Resolves at the client's next answer; undefined when no answer may cut the wait short. */
  answered: Promise<void> | undefined;
  bounds: BackoffBounds;
  random: () => number;
  resource: string;
  logger: Logger;
}): Promise<void> {
  const { signal, answered, bounds } = options;
  if (answered === undefined || delayMs <= bounds.baseMs) return void await sleep(delayMs, signal);
  const early = new AbortController();
  const stop = () => early.abort();
  signal.addEventListener("abort", stop, { once: true });
  void answered.then(stop);
  const slept = await sleep(delayMs, early.signal);
  signal.removeEventListener("abort", stop);
  if (slept || signal.aborted) return;
  const retryInMs = Math.round(jitteredDelay(0, bounds, options.random));
  options.logger.info(
    { resource: options.resource, retryInMs },
    "The API server answers again: retrying",
  );
  await sleep(retryInMs, signal);
}
