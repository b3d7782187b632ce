/**
 * The fault table: what each CSI method should suffer on its next calls.
 * Counters are consumed when a call starts (take), so concurrent calls each
 * see a consistent plan.
 */
import { parseStatusCode, statusName } from "./csi_error.ts";
import {
  CSI_METHODS,
  type CsiMethod,
  type FaultSpec,
  type FaultState,
  type LostAnswer,
} from "./types.ts";

/** What one call must do, decided when it arrives. */
export interface CallPlan {
  latencyMs: number;
  hang: boolean;
  error: { code: number; message: string; after: boolean } | null;
  /** Probe only: how to report readiness instead of ready=true. */
  ready: "false" | "absent" | null;
  /** Do the work, then lose its answer this way (fail: with this code and message). */
  lost: { mode: LostAnswer; code: number; message: string } | null;
}

type Counted = { remaining: number | null };

export type ParsedFault = { ok: true; fault: FaultSpec } | { ok: false; problems: string[] };

const FAULT_FIELDS = new Set([
  "method",
  "code",
  "message",
  "times",
  "latencyMs",
  "hang",
  "notReady",
  "omitReady",
  "after",
  "lostAnswer",
  "latencyMaxMs",
  "probability",
]);

const LOST_ANSWERS: readonly LostAnswer[] = ["hang", "fail", "cut"];
/** The code of a lost answer that fails: the caller cannot tell whether the work was done. */
const LOST_ANSWER_CODE = 14; // UNAVAILABLE

/** Validates a fault from JSON, listing every problem at once. */
export function parseFaultSpec(input: unknown): ParsedFault {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return { ok: false, problems: ["a fault must be a JSON object"] };
  }
  const raw = input as Record<string, unknown>;
  const problems = Object.keys(raw).filter((key) => !FAULT_FIELDS.has(key)).map((key) =>
    `unknown field "${key}"`
  );
  if (!CSI_METHODS.includes(raw["method"] as CsiMethod)) {
    problems.push(
      `method must be one of ${CSI_METHODS.join(", ")}; got ${JSON.stringify(raw["method"])}`,
    );
  }
  const code = raw["code"];
  if (code !== undefined) {
    const parsed = typeof code === "number" || typeof code === "string"
      ? parseStatusCode(code)
      : undefined;
    if (parsed === undefined || parsed === 0) {
      problems.push(`code must be a gRPC error code 1-16 or its name; got ${JSON.stringify(code)}`);
    }
  }
  for (const key of ["times", "latencyMs", "latencyMaxMs"]) {
    const value = raw[key];
    if (value !== undefined && !(Number.isSafeInteger(value) && (value as number) >= 0)) {
      problems.push(`${key} must be a whole number >= 0; got ${JSON.stringify(value)}`);
    }
  }
  for (const key of ["hang", "notReady", "omitReady", "after"]) {
    if (raw[key] !== undefined && typeof raw[key] !== "boolean") {
      problems.push(`${key} must be true or false`);
    }
  }
  if (raw["message"] !== undefined && typeof raw["message"] !== "string") {
    problems.push("message must be a string");
  }
  if ((raw["notReady"] === true || raw["omitReady"] === true) && raw["method"] !== "Probe") {
    problems.push("notReady and omitReady apply to Probe only");
  }
  if (raw["after"] === true && code === undefined) problems.push("after needs a code to fail with");
  problems.push(...lostAnswerProblems(raw));
  const effects = ["code", "latencyMs", "hang", "notReady", "omitReady", "lostAnswer"];
  if (!effects.some((key) => raw[key] !== undefined)) {
    problems.push(`a fault sets at least one of ${effects.join(", ")}`);
  }
  return problems.length > 0
    ? { ok: false, problems }
    : { ok: true, fault: raw as unknown as FaultSpec };
}

/** What is wrong with the lost-answer, latency range and probability fields. */
function lostAnswerProblems(raw: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const lost = raw["lostAnswer"];
  if (lost !== undefined && !LOST_ANSWERS.includes(lost as LostAnswer)) {
    problems.push(
      `lostAnswer must be one of ${LOST_ANSWERS.join(", ")}; got ${JSON.stringify(lost)}`,
    );
  }
  if (lost !== undefined && (raw["after"] !== undefined || raw["hang"] !== undefined)) {
    problems.push("lostAnswer does the work itself: leave out after and hang");
  }
  if (lost !== undefined && lost !== "fail" && raw["code"] !== undefined) {
    problems.push("a code goes with lostAnswer fail only");
  }
  const min = raw["latencyMs"];
  const max = raw["latencyMaxMs"];
  if (max !== undefined && (typeof min !== "number" || (max as number) < min)) {
    problems.push("latencyMaxMs needs latencyMs, and at least as much");
  }
  const probability = raw["probability"];
  if (
    probability !== undefined &&
    !(typeof probability === "number" && probability > 0 && probability <= 1)
  ) {
    problems.push(`probability must be in (0, 1]; got ${JSON.stringify(probability)}`);
  }
  return problems;
}

export class FaultTable {
  readonly #faults = new Map<CsiMethod, ArmedState>();
  readonly #waiters = new Map<CsiMethod, Set<() => void>>();
  readonly #random: () => number;

  constructor(options: { random?: () => number } = {}) {
    this.#random = options.random ?? Math.random;
  }

  /** Arms a validated fault: each part given replaces that part for the method. */
  set(fault: FaultSpec): void {
    const state = this.#faults.get(fault.method) ?? emptyState(fault.method);
    const counted: Counted = {
      remaining: fault.times === undefined || fault.times === 0 ? null : fault.times,
    };
    if (fault.latencyMs !== undefined) {
      state.latencyMs = fault.latencyMs;
      state.latencyMaxMs = fault.latencyMaxMs ?? fault.latencyMs;
    }
    if (fault.probability !== undefined) state.probability = fault.probability;
    if (fault.lostAnswer !== undefined) {
      state.lost = { mode: fault.lostAnswer, ...counted };
      const code = parseStatusCode(fault.code ?? LOST_ANSWER_CODE) ?? LOST_ANSWER_CODE;
      const message = fault.message ??
        "injected fault: the answer was lost after the work was done";
      state.lostError = { code, message };
    } else if (fault.code !== undefined) {
      const code = parseStatusCode(fault.code);
      if (code === undefined || code === 0) {
        throw new RangeError(`not a gRPC error code: ${fault.code}`);
      }
      const message = fault.message ?? `injected fault: ${statusName(code)}`;
      state.error = { code, message, after: fault.after === true, ...counted };
    }
    if (fault.hang !== undefined) state.hang = fault.hang ? { ...counted } : null;
    if (fault.notReady !== undefined) state.notReady = fault.notReady ? { ...counted } : null;
    if (fault.omitReady !== undefined) state.omitReady = fault.omitReady ? { ...counted } : null;
    if (isEmpty(state)) this.#faults.delete(fault.method);
    else this.#faults.set(fault.method, state);
  }

  /** Disarms one method's faults, or all, and lets the calls they hang go on. */
  clear(method?: CsiMethod): void {
    const methods = method === undefined ? [...CSI_METHODS] : [method];
    for (const name of methods) {
      this.#faults.delete(name);
      for (const release of this.#waiters.get(name) ?? []) release();
      this.#waiters.delete(name);
    }
  }

  list(): FaultState[] {
    return [...this.#faults.values()].map(({ lostError: _, ...state }) => structuredClone(state));
  }

  /** Decides what the call arriving now suffers, counting it against its faults. */
  take(method: CsiMethod): CallPlan {
    const state = this.#faults.get(method);
    if (state === undefined) {
      return { latencyMs: 0, hang: false, error: null, ready: null, lost: null };
    }
    const latencyMs = state.latencyMs +
      Math.floor(this.#random() * (state.latencyMaxMs - state.latencyMs + 1));
    const fires = state.probability >= 1 || this.#random() < state.probability;
    const plan: CallPlan = { latencyMs, hang: false, error: null, ready: null, lost: null };
    if (!fires) return plan;
    plan.hang = consume(state.hang);
    plan.error = consume(state.error) && state.error !== null
      ? { code: state.error.code, message: state.error.message, after: state.error.after }
      : null;
    plan.ready = consume(state.notReady) ? "false" : consume(state.omitReady) ? "absent" : null;
    plan.lost = consume(state.lost) && state.lost !== null
      ? { mode: state.lost.mode, ...state.lostError }
      : null;
    if (state.hang?.remaining === 0) state.hang = null;
    if (state.error?.remaining === 0) state.error = null;
    if (state.notReady?.remaining === 0) state.notReady = null;
    if (state.omitReady?.remaining === 0) state.omitReady = null;
    if (state.lost?.remaining === 0) state.lost = null;
    if (isEmpty(state)) this.#faults.delete(method);
    return plan;
  }

  /** Resolves true once the method's faults are cleared, false if the signal aborts first. */
  untilCleared(method: CsiMethod, signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiters = this.#waiters.get(method) ?? new Set();
      this.#waiters.set(method, waiters);
      const finish = (cleared: boolean) => {
        waiters.delete(release);
        signal.removeEventListener("abort", abort);
        resolve(cleared);
      };
      const release = () => finish(true);
      const abort = () => finish(false);
      waiters.add(release);
      signal.addEventListener("abort", abort, { once: true });
    });
  }
}

/** A method's armed faults, with the code and message its lost answers fail with. */
type ArmedState = FaultState & { lostError: { code: number; message: string } };

function emptyState(method: CsiMethod): ArmedState {
  return {
    method,
    latencyMs: 0,
    latencyMaxMs: 0,
    probability: 1,
    error: null,
    hang: null,
    notReady: null,
    omitReady: null,
    lost: null,
    lostError: { code: LOST_ANSWER_CODE, message: "" },
  };
}

function isEmpty(state: FaultState): boolean {
  return state.latencyMs === 0 && state.error === null && state.hang === null &&
    state.notReady === null && state.omitReady === null && state.lost === null;
}

/** True if the fault fires for this call; counts it down. */
function consume(counted: Counted | null): boolean {
  if (counted === null) return false;
  if (counted.remaining !== null) counted.remaining -= 1;
  return true;
}
