/**
 * How the agent stops. Two stages: the soft stop (a signal arrived: take no
 * new work) and the hard stop (the drain deadline passed: cancel what is
 * still running). Loops register themselves to be awaited; resources register
 * a close. One place, so that every part shuts down the same way.
 */
import process from "node:process";
import type { Logger } from "../log/logger.ts";

/** The agent's run, from start to exit. */
/**
 * Extra time, beyond the CSI deadline, that shutdown waits for work in flight;
 * the pod's termination grace period must cover both.
 */
export const DRAIN_MARGIN_MS = 2000;

export class Lifecycle {
  /** Aborted on SIGTERM/SIGINT or a fatal error: no new work. */
  readonly shutdown: AbortController = new AbortController();
  /** Aborted when the drain deadline passes: work in flight is cancelled. */
  readonly halt: AbortController = new AbortController();
  readonly #logger: Logger;
  readonly #loops: Promise<void>[] = [];
  readonly #finalLoops: Promise<void>[] = [];
  /** Loops that ended before any stop was asked for: liveness fails on them. */
  readonly #ended: string[] = [];
  #running = 0;
  readonly #closers: (() => void | Promise<void>)[] = [];

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /**
   * Awaits a loop on the way out. Loops end on the soft stop; `final` loops
   * (events, PV saves) end on the hard stop, so they finish what the others left.
   * A loop that ends before any stop (it returned or threw: a bug) is
   * remembered by its `name`, and liveness fails: a restart is the remedy.
   * A `once` task (a check made at start-up) is awaited on the way out too,
   * but is meant to end: its end is not counted.
   */
  track(
    loop: Promise<void>,
    options: { final?: boolean; name?: string; once?: boolean } = {},
  ): void {
    const name = options.name ?? `loop ${this.#loops.length + this.#finalLoops.length + 1}`;
    this.#running++;
    const ended = (error?: unknown) => {
      this.#running--;
      if (this.shutdown.signal.aborted || options.once) return;
      this.#ended.push(name);
      this.#logger.error({ loop: name, err: error }, "A loop of the agent ended on its own");
    };
    (options.final ? this.#finalLoops : this.#loops).push(loop.then(() => ended(), ended));
  }

  /** Loops running now, and those that ended before any stop was asked for. */
  loops(): { running: number; ended: readonly string[] } {
    return { running: this.#running, ended: this.#ended };
  }

  /** Runs on the way out, after every loop ended, in reverse order of registration. */
  onClose(close: () => void | Promise<void>): void {
    this.#closers.push(close);
  }

  /** The first SIGTERM/SIGINT is a soft stop, a second one exits at once. Returns the untrap. */
  trapSignals(): () => void {
    const onSignal = (signal: string) => {
      if (this.shutdown.signal.aborted) {
        this.#logger.warn({ signal }, "Second signal: exiting without waiting");
        process.exit(1);
      }
      this.#logger.notice({ signal }, "Shutting down: no new work, waiting for work in flight");
      this.shutdown.abort();
    };
    process.on("SIGTERM", onSignal);
    process.on("SIGINT", onSignal);
    return () => {
      process.off("SIGTERM", onSignal);
      process.off("SIGINT", onSignal);
    };
  }

  /**
   * Soft stop, wait for the loops and for `drained` (calls in flight) until
   * `drainMs` passed, then hard stop and close everything.
   */
  async stop(
    options: { drainMs: number; drained: (deadline: number) => Promise<boolean> },
  ): Promise<void> {
    this.shutdown.abort();
    const deadline = Date.now() + options.drainMs;
    const timer = setTimeout(() => this.halt.abort(), options.drainMs);
    await Promise.allSettled(this.#loops);
    if (!(await options.drained(deadline))) {
      this.#logger.warn("Work still in flight at the drain deadline");
    }
    clearTimeout(timer);
    await this.close();
  }

  /** Hard stop now (fatal errors): cancel everything, wait for the loops, close. */
  async close(): Promise<void> {
    this.shutdown.abort();
    this.halt.abort();
    await Promise.allSettled([...this.#loops, ...this.#finalLoops]);
    for (const close of this.#closers.splice(0).reverse()) {
      try {
        await close();
      } catch (error) {
        this.#logger.warn({ err: error }, "Closing a resource failed");
      }
    }
  }
}
