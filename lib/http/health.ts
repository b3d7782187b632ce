/**
 * /healthz and /readyz answers.
 *
 * Liveness is about this process only: its heartbeat is recent (timers run,
 * the event loop is not stuck) and none of its loops (informers, workers,
 * publishers) ended on its own. It is answered from memory, never waits on
 * the driver or the API server, so a slow driver cannot get the agent
 * restarted: the driver's health belongs to the driver's own liveness probe.
 *
 * Readiness is now, not latched: a set of named conditions, each either set
 * by the part that owns it or evaluated at every report (the CSI driver's
 * last Probe, the informers' failures against the readiness window). A
 * transition of any condition, and of the whole, is logged once.
 */
import type { Logger } from "../log/logger.ts";
import type { HeartbeatStatus } from "../runtime/heartbeat.ts";
import { sleep } from "../runtime/sleep.ts";

/**
 * The kubelet probes deploy/ configures (kustomize, Helm, the
 * replace-csi-provisioner component); tests/deploy checks the manifests
 * carry exactly these.
 *
 * Liveness: /healthz answers from memory in milliseconds, so 3 s is a loop
 * that is stuck, not busy; three failures 10 s apart restart the container
 * after about 30 s, and the agent itself fails the heartbeat after 10 s
 * (HEARTBEAT_STALE_MS) without a timer. No initial delay: it answers from
 * the first second, whatever the driver and the API server do.
 *
 * Readiness: the agent applies its own windows (the driver's Probe every
 * 10 s with a 5 s deadline, --readiness-window for informers), so one
 * answer is enough: failureThreshold 1, within one 10 s period.
 */
export const PROBES = {
  liveness: { path: "/healthz", periodSeconds: 10, timeoutSeconds: 3, failureThreshold: 3 },
  readiness: { path: "/readyz", periodSeconds: 10, timeoutSeconds: 3, failureThreshold: 1 },
} as const;

/** The answer of a health endpoint. */
export interface HealthReport {
  ok: boolean;
  /** One line per check, e.g. "csi: ok" or "informers: not synced". */
  lines: string[];
}

/** A condition: met (true) or why not. */
type Condition = true | string;

/** What liveness reads. */
interface LivenessSources {
  heartbeat: () => HeartbeatStatus;
  /** How long a heartbeat may be missing before the agent is not alive. */
  staleMs: number;
  loops: () => { running: number; ended: readonly string[] };
}

/** Liveness from the agent's own state; cheap and synchronous. */
export function livenessReport(sources: LivenessSources): HealthReport {
  const beat = sources.heartbeat();
  const loops = sources.loops();
  const beatOk = beat.ageMs <= sources.staleMs;
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  return {
    ok: beatOk && loops.ended.length === 0,
    lines: [
      beatOk
        ? `heartbeat: ok (${seconds(beat.ageMs)} ago; event loop lag at most ${
          Math.round(beat.maxLagMs)
        } ms in the last minute)`
        : `heartbeat: none for ${seconds(beat.ageMs)} (limit ${seconds(sources.staleMs)})`,
      loops.ended.length === 0
        ? `loops: ok (${loops.running} running)`
        : `loops: ended on their own: ${loops.ended.join(", ")}`,
    ],
  };
}

/** Named readiness conditions; ready when every registered condition is met. */
export class Readiness {
  readonly #conditions = new Map<string, Condition | (() => Condition)>();
  /** What each condition was at the last report, to log transitions. */
  readonly #last = new Map<string, boolean>();
  #lastReady: boolean | undefined;
  readonly #logger: Logger | undefined;
  readonly #onChange: ((condition: string, met: boolean) => void) | undefined;

  constructor(
    options: { logger?: Logger; onChange?: (condition: string, met: boolean) => void } = {},
  ) {
    this.#logger = options.logger;
    this.#onChange = options.onChange;
  }

  /** Registers a condition that is not met yet, with the reason shown until it is. */
  require(name: string, waitingFor: string): void {
    if (!this.#conditions.has(name)) this.#conditions.set(name, waitingFor);
  }

  /** Marks a condition met (or not met again, with a reason), or makes it evaluated at each report. */
  set(name: string, state: Condition | (() => Condition)): void {
    this.#conditions.set(name, state);
  }

  /** Evaluates every condition now, logs what changed since the last report, and answers. */
  report(): HealthReport {
    const lines: string[] = [];
    let ready = this.#conditions.size > 0;
    for (const [name, state] of this.#conditions) {
      const condition = typeof state === "function" ? state() : state;
      const met = condition === true;
      ready &&= met;
      lines.push(`${name}: ${met ? "ok" : condition}`);
      this.#transition(name, met, condition);
    }
    if (ready !== this.#lastReady && this.#lastReady !== undefined) {
      if (ready) this.#logger?.notice("Ready: every readiness condition is met");
      else this.#logger?.warn({ conditions: lines }, "Not ready");
    }
    this.#lastReady = ready;
    return { ok: ready, lines };
  }

  /** Reports every `intervalMs` until `signal` aborts, so that transitions are logged without probes. */
  async run(signal: AbortSignal, intervalMs = 1000): Promise<void> {
    do this.report(); while (await sleep(intervalMs, signal));
  }

  #transition(name: string, met: boolean, condition: Condition): void {
    const before = this.#last.get(name);
    this.#last.set(name, met);
    if (before === met) return;
    this.#onChange?.(name, met);
    if (before === undefined) return; // the state at start-up: no news
    if (met) this.#logger?.notice({ condition: name }, "Readiness condition met");
    else this.#logger?.warn({ condition: name, reason: condition }, "Readiness condition failed");
  }
}
