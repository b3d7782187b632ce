/**
 * Serves the CSI handlers over grpc-js with fault injection and the call log
 * wrapped around every call. A call's waits (latency, hang) end when the
 * client cancels, its deadline passes or the driver stops, so nothing is left
 * pending behind a stopped driver.
 */
import * as grpc from "@grpc/grpc-js";
import type { Logger } from "pino";
import { loadCsiServices } from "../../lib/csi/proto.ts";
import type { CallLog } from "./call_log.ts";
import { CsiError, statusName } from "./csi_error.ts";
import type { CsiHandler } from "./csi_handlers.ts";
import type { CallPlan, FaultTable } from "./faults.ts";
import type { CsiMethod } from "./types.ts";

export interface CallDeps {
  handlers: Record<CsiMethod, CsiHandler>;
  faults: FaultTable;
  calls: CallLog;
  logger: Logger;
  /** Aborts when the driver stops. */
  stopping: AbortSignal;
  /** Cuts every client connection (a lost answer of mode "cut"); the socket keeps listening. */
  cutConnections?: () => void;
}

type UnaryCall = grpc.ServerUnaryCall<unknown, unknown>;

const DEADLINE_TOLERANCE_MS = 50;

/** A grpc-js server with the three CSI services, not yet bound. */
export function createCsiServer(deps: CallDeps): grpc.Server {
  const services = loadCsiServices();
  const server = new grpc.Server();
  for (const ctor of [services.Identity, services.Controller, services.Node]) {
    const implementation: grpc.UntypedServiceImplementation = {};
    // Methods without a handler are left to grpc-js, which answers Unimplemented.
    for (const method of Object.keys(ctor.service).filter((name) => name in deps.handlers)) {
      implementation[method] = (call: UnaryCall, callback: grpc.sendUnaryData<unknown>) => {
        void runCall(method as CsiMethod, call, { deps, callback });
      };
    }
    server.addService(ctor.service, implementation);
  }
  return server;
}

/** Binds to a unix socket path; the path must be free (see prepareSocketPath). */
export function bindCsiServer(server: grpc.Server, socketPath: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.bindAsync(`unix://${socketPath}`, grpc.ServerCredentials.createInsecure(), (error) => {
      if (error === null) resolve();
      else reject(error);
    });
  });
}

/** Lets answered calls drain, then cuts whatever is left after graceMs. */
export function shutdownCsiServer(server: grpc.Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, graceMs);
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

async function runCall(
  method: CsiMethod,
  call: UnaryCall,
  context: { deps: CallDeps; callback: grpc.sendUnaryData<unknown> },
): Promise<void> {
  const { deps, callback } = context;
  const started = performance.now();
  const entry = deps.calls.begin(method, call.request, new Date());
  const plan = deps.faults.take(method);
  if (plan.lost !== null) {
    await runLostAnswer(method, call, { ...context, plan, entry, started });
    return;
  }
  const abort = callAbortSignal(call, deps.stopping);
  let response: unknown = null;
  let failure: CsiError | null = null;
  let injected = false;
  const inject = (error: { code: number; message: string }) => {
    injected = true;
    return new CsiError(error.code, error.message);
  };
  try {
    if (plan.latencyMs > 0) await sleep(plan.latencyMs, abort.signal);
    if (plan.hang) {
      // Clearing the faults releases the call and, being a clear, also drops its error.
      if (await deps.faults.untilCleared(method, abort.signal)) plan.error = null;
    }
    if (abort.signal.aborted) throw abort.signal.reason;
    if (plan.error !== null && !plan.error.after) throw inject(plan.error);
    response = (deps.handlers[method] as (request: unknown, p: typeof plan) => unknown)(
      call.request,
      plan,
    );
    if (plan.error?.after === true) throw inject(plan.error);
  } catch (error: unknown) {
    failure = error instanceof CsiError
      ? error
      : new CsiError(grpc.status.INTERNAL, error instanceof Error ? error.message : String(error));
  } finally {
    abort.dispose();
  }
  const durationMs = Math.round((performance.now() - started) * 1000) / 1000;
  const code = failure?.code ?? grpc.status.OK;
  deps.calls.finish(entry, { code, message: failure?.message ?? "", durationMs });
  deps.logger.info({
    method,
    code: statusName(code),
    durationMs,
    ...subject(call.request),
    injected,
  }, "rpc");
  if (failure === null) callback(null, response);
  else callback({ code: failure.code, details: failure.message });
}

/**
 * A call whose work is done whatever the caller does (latency included: it
 * is the work's duration), and whose answer is then lost: hung until the
 * faults are cleared (then answered) or the caller gives up, failed with a
 * code, or cut off with the whole connection. The call log records what the
 * caller got: the code, or CANCELLED when it gave up first.
 */
async function runLostAnswer(
  method: CsiMethod,
  call: UnaryCall,
  context: {
    deps: CallDeps;
    callback: grpc.sendUnaryData<unknown>;
    plan: CallPlan;
    entry: ReturnType<CallLog["begin"]>;
    started: number;
  },
): Promise<void> {
  const { deps, callback, plan } = context;
  const lost = plan.lost!;
  let response: unknown = null;
  let failure: CsiError | null = null;
  try {
    if (plan.latencyMs > 0) await sleep(plan.latencyMs, deps.stopping);
    response = (deps.handlers[method] as (request: unknown, p: CallPlan) => unknown)(
      call.request,
      plan,
    );
  } catch (error: unknown) {
    // The work itself failed (or the driver is stopping): nothing was done, nothing to lose.
    failure = error instanceof CsiError ? error : new CsiError(
      grpc.status.UNAVAILABLE,
      error instanceof Error ? error.message : String(error),
    );
  }
  let outcome = failure ?? new CsiError(lost.code, lost.message);
  if (failure === null && lost.mode === "hang") {
    const abort = callAbortSignal(call, deps.stopping);
    const released = await deps.faults.untilCleared(method, abort.signal);
    abort.dispose();
    outcome = released ? new CsiError(grpc.status.OK, "") : abort.signal.reason as CsiError;
  }
  if (failure === null && lost.mode === "cut") {
    outcome = new CsiError(grpc.status.UNAVAILABLE, "connection cut after the work was done");
  }
  const durationMs = Math.round((performance.now() - context.started) * 1000) / 1000;
  deps.calls.finish(context.entry, { code: outcome.code, message: outcome.message, durationMs });
  deps.logger.info({
    method,
    code: statusName(outcome.code),
    durationMs,
    ...subject(call.request),
    injected: failure === null,
    lostAnswer: lost.mode,
  }, "rpc");
  if (failure === null && lost.mode === "cut") deps.cutConnections?.();
  else if (outcome.code === grpc.status.OK) callback(null, response);
  else callback({ code: outcome.code, details: outcome.message });
}

/** Names the volume a call is about, for the log line; never anything secret. */
function subject(request: unknown): Record<string, string> {
  const fields = request as { name?: unknown; volume_id?: unknown } | null;
  const out: Record<string, string> = {};
  if (typeof fields?.name === "string" && fields.name !== "") out["volume"] = fields.name;
  if (typeof fields?.volume_id === "string" && fields.volume_id !== "") {
    out["volumeId"] = fields.volume_id;
  }
  return out;
}

/** Aborts with the status the call ends with: client cancel, deadline, or driver stop. */
function callAbortSignal(
  call: UnaryCall,
  stopping: AbortSignal,
): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const end = (code: number, message: string) => {
    if (!controller.signal.aborted) controller.abort(new CsiError(code, message));
  };
  const deadline = call.getDeadline();
  const deadlineMs = deadline instanceof Date ? deadline.getTime() : deadline;
  const onDeadline = () => end(grpc.status.DEADLINE_EXCEEDED, "the client's deadline passed");
  // A client cancels at its own deadline, which the server sees a little
  // later than its copy of it: a cancel that close to the deadline is the deadline.
  const onCancel = () =>
    Date.now() >= deadlineMs - DEADLINE_TOLERANCE_MS
      ? onDeadline()
      : end(grpc.status.CANCELLED, "the client cancelled the call");
  const onStop = () => end(grpc.status.UNAVAILABLE, "the test driver is stopping");
  call.on("cancelled", onCancel);
  stopping.addEventListener("abort", onStop);
  if (stopping.aborted) onStop();
  // A caller that left while the work ran (a lost answer's) is not told again.
  if (call.cancelled) onCancel();
  const timer = Number.isFinite(deadlineMs)
    ? setTimeout(onDeadline, Math.max(0, deadlineMs - Date.now()))
    : undefined;
  return {
    signal: controller.signal,
    dispose: () => {
      clearTimeout(timer);
      call.off("cancelled", onCancel);
      stopping.removeEventListener("abort", onStop);
    },
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const done = () => {
      signal.removeEventListener("abort", aborted);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const aborted = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", aborted, { once: true });
  });
}
