/**
 * The driver's health, watched in the background after the handshake: a CSI
 * Probe every PROBE_INTERVAL_MS with its own PROBE_TIMEOUT_MS deadline. It
 * feeds readiness (the "csi" condition: why the driver is not fit right
 * now), a gauge and a log line at each change, and never liveness: restarting
 * the agent does not make a slow driver faster. The channel's state is read
 * at each report too: a connection that is not READY is not ready.
 */
import * as grpc from "@grpc/grpc-js";
import type { Logger } from "../log/logger.ts";
import { sleep } from "../runtime/sleep.ts";
import type { CsiConnection } from "./connection.ts";
import { CsiError } from "./status.ts";

/** How often the driver is probed once the agent runs. */
export const PROBE_INTERVAL_MS = 10_000;
/**
 * The deadline of one background Probe. A Probe is a health check the driver
 * answers from memory; one that needs more than 5 s means the driver cannot
 * serve the agent's calls in reasonable time either.
 */
export const PROBE_TIMEOUT_MS = 5_000;

/** What a probe found, for logs and readiness. */
type ProbeResult = { ok: true } | { ok: false; reason: string };

/** The background Probe and what it last saw. */
export class DriverProbe {
  readonly #connection: Pick<CsiConnection, "call" | "state" | "target">;
  readonly #logger: Logger;
  readonly #onChange: (ready: boolean) => void;
  readonly #intervalMs: number;
  readonly #timeoutMs: number;
  #last: ProbeResult = { ok: true };

  constructor(
    connection: Pick<CsiConnection, "call" | "state" | "target">,
    options: {
      logger: Logger;
      /** Sets the driver-ready gauge. */
      onChange?: (ready: boolean) => void;
      intervalMs?: number;
      timeoutMs?: number;
    },
  ) {
    this.#connection = connection;
    this.#logger = options.logger;
    this.#onChange = options.onChange ?? (() => {});
    this.#intervalMs = options.intervalMs ?? PROBE_INTERVAL_MS;
    this.#timeoutMs = options.timeoutMs ?? PROBE_TIMEOUT_MS;
    this.#onChange(true);
  }

  /** The readiness condition: true, or why the driver is not fit now. */
  readiness(): true | string {
    const state = this.#connection.state(false);
    if (state !== grpc.connectivityState.READY) {
      return `CSI connection to ${this.#connection.target} is ${grpc.connectivityState[state]}`;
    }
    return this.#last.ok ? true : this.#last.reason;
  }

  /**
   * Probes every interval (the handshake just probed: the first one waits)
   * until `stop` aborts; a Probe in flight then finishes unless `halt` aborts
   * it, as every CSI call of the agent does on the way out.
   */
  async run(stop: AbortSignal, halt: AbortSignal = stop): Promise<void> {
    while (await sleep(this.#intervalMs, stop)) {
      this.#record(await this.probe(halt), stop);
    }
  }

  /** One Probe with its deadline. */
  async probe(signal: AbortSignal): Promise<ProbeResult> {
    const started = performance.now();
    try {
      const response = await this.#connection.call("Probe", {}, {
        signal,
        timeoutMs: this.#timeoutMs,
      });
      if (response.ready !== null && !response.ready.value) {
        return { ok: false, reason: "CSI driver answers Probe with ready=false" };
      }
      return { ok: true };
    } catch (error) {
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      const deadline = (this.#timeoutMs / 1000).toFixed(0);
      const timedOut = error instanceof CsiError && error.codeName === "DeadlineExceeded";
      return {
        ok: false,
        reason: timedOut
          ? `CSI driver did not answer Probe within ${deadline} s`
          : `CSI driver Probe failed after ${seconds} s: ${(error as Error).message}`,
      };
    }
  }

  #record(result: ProbeResult, signal: AbortSignal): void {
    if (signal.aborted) return;
    const before = this.#last;
    this.#last = result;
    if (before.ok === result.ok) return;
    this.#onChange(result.ok);
    if (result.ok) this.#logger.notice("CSI driver answers Probe again");
    else this.#logger.warn({ reason: result.reason }, "CSI driver is not healthy");
  }
}
