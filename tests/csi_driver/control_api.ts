/**
 * The in-process control of a running driver. The HTTP control endpoint
 * serves exactly this, so tests see the same data and the same validation
 * whether they hold the driver or talk to it over its control socket.
 */
import type { CallLog } from "./call_log.ts";
import { type FaultTable, parseFaultSpec } from "./faults.ts";
import { toBytes } from "./quantity.ts";
import { CSI_METHODS, type CsiMethod, type DriverControlApi, type FaultSpec } from "./types.ts";
import type { VolumeStore } from "./volume_store.ts";

/** A control request the driver refuses; status is the HTTP status it maps to. */
export class ControlError extends Error {
  readonly status: 400 | 404;

  constructor(status: 400 | 404, message: string) {
    super(message);
    this.name = "ControlError";
    this.status = status;
  }
}

export interface DriverCore {
  store: VolumeStore;
  faults: FaultTable;
  calls: CallLog;
}

export function inProcessControl(core: DriverCore): DriverControlApi {
  return {
    volumes: () => settle(() => core.store.volumes()),
    calls: (method?: CsiMethod) =>
      settle(() => {
        if (method !== undefined) checkMethod(method);
        return core.calls.list(method);
      }),
    clearCalls: () => settle(() => core.calls.clear()),
    pools: () => settle(() => core.store.pools()),
    faults: () => settle(() => core.faults.list()),
    setFault: (fault: FaultSpec) =>
      settle(() => {
        const parsed = parseFaultSpec(fault);
        if (!parsed.ok) throw new ControlError(400, `invalid fault: ${parsed.problems.join("; ")}`);
        core.faults.set(parsed.fault);
      }),
    clearFaults: (method?: CsiMethod) =>
      settle(() => {
        if (method !== undefined) checkMethod(method);
        core.faults.clear(method);
      }),
    resizePool: (kind, size, options = {}) =>
      settle(() => {
        if (!core.store.pools().some((pool) => pool.kind === kind)) {
          throw new ControlError(404, `no pool of kind "${kind}"`);
        }
        const sizeBytes = bytes(size, "size");
        const max = options.maxVolumeSize;
        const maxBytes = max === undefined || max === null ? max : bytes(max, "maxVolumeSize");
        return core.store.resizePool(kind, sizeBytes, maxBytes);
      }),
  };
}

/** Runs fn now and reports its result or its throw as a promise, like an async call would. */
function settle<T>(fn: () => T): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (error: unknown) {
    return Promise.reject(error);
  }
}

function checkMethod(method: string): void {
  if (!CSI_METHODS.includes(method as CsiMethod)) {
    throw new ControlError(400, `unknown method "${method}"; known: ${CSI_METHODS.join(", ")}`);
  }
}

function bytes(size: unknown, field: string): number {
  if (typeof size !== "number" && typeof size !== "string") {
    throw new ControlError(400, `${field} must be bytes or a quantity such as "5Gi"`);
  }
  try {
    return toBytes(size);
  } catch (error: unknown) {
    throw new ControlError(
      400,
      `${field}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}
