import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { CsiError } from "../../csi/status.ts";
import type { GetCapacityRequest, GetCapacityResponse } from "../../csi/types.ts";
import { askCapacity, type GetCapacityOptions } from "./get_capacity.ts";
import { FakeClock } from "../../../tests/fakes/clock.ts";
import {
  claim,
  NODE,
  provisionOptions,
  SEGMENT,
  storageClass,
  TOPOLOGY_KEY,
} from "../../../tests/builders/provision.ts";

const GI = 1024n ** 3n;
const target = {
  claim: claim(),
  storageClass: storageClass({ volumeBindingMode: "Immediate", parameters: { kind: "fast" } }),
  requestBytes: GI,
};

function answer(available: bigint, maximum?: bigint): GetCapacityResponse {
  return {
    available_capacity: String(available),
    maximum_volume_size: maximum === undefined ? null : { value: String(maximum) },
    minimum_volume_size: null,
  };
}

/** A driver whose GetCapacity gives the answers in turn (an Error is thrown; "hang" never answers). */
function driver(answers: (GetCapacityResponse | Error | "hang")[]) {
  const requests: GetCapacityRequest[] = [];
  return {
    requests,
    getCapacity(request: GetCapacityRequest, signal: AbortSignal): Promise<GetCapacityResponse> {
      requests.push(request);
      const next = answers.shift() ?? answer(0n);
      if (next === "hang") {
        return new Promise((_, reject) =>
          signal.addEventListener("abort", () => reject(new Error("cancelled")), { once: true })
        );
      }
      return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
    },
  };
}

function options(overrides: Partial<GetCapacityOptions> = {}): GetCapacityOptions {
  return {
    prepare: provisionOptions({ strictTopology: true }),
    getCapacity: true,
    timeoutMs: 10_000,
    clock: new FakeClock(),
    ...overrides,
  };
}

const signal = new AbortController().signal;

Deno.test("askCapacity asks GetCapacity for the request CreateVolume would get", async () => {
  const csi = driver([answer(2n * GI)]);
  deepStrictEqual(await askCapacity(target, { csi, options: options() }, signal), {
    kind: "fits",
    availableBytes: 2n * GI,
  });
  strictEqual(csi.requests.length, 1);
  const [request] = csi.requests;
  deepStrictEqual(request?.parameters, { kind: "fast" });
  deepStrictEqual(request?.accessible_topology, { segments: SEGMENT });
  strictEqual(request?.volume_capabilities[0]?.access_mode?.mode, "SINGLE_NODE_WRITER");
});

Deno.test("askCapacity: too little, or a maximum volume size below the request, is short", async () => {
  const short = await askCapacity(
    target,
    { csi: driver([answer(GI / 2n)]), options: options() },
    signal,
  );
  deepStrictEqual(short, { kind: "short", availableBytes: GI / 2n });
  const capped = await askCapacity(target, {
    csi: driver([answer(10n * GI, GI / 4n)]),
    options: options(),
  }, signal);
  deepStrictEqual(capped, { kind: "short", availableBytes: GI / 4n });
});

Deno.test("askCapacity has a deadline: a GetCapacity that never answers fails after --timeout", async () => {
  const clock = new FakeClock();
  const csi = driver(["hang"]);
  const pending = askCapacity(
    target,
    { csi, options: options({ clock, timeoutMs: 5000 }) },
    signal,
  );
  clock.advance(4999);
  await Promise.resolve();
  clock.advance(1);
  deepStrictEqual(await pending, {
    kind: "failed",
    message: "GetCapacity did not answer within 5000 ms",
  });
  strictEqual(clock.pendingTimers(), 0, "the deadline's timer is gone");
});

Deno.test("askCapacity: an unavailable driver fails the call; other errors proceed, as upstream", async () => {
  const unavailable = new CsiError("/csi.v1.Controller/GetCapacity", 14, "connection refused");
  const failed = await askCapacity(
    target,
    { csi: driver([unavailable]), options: options() },
    signal,
  );
  strictEqual(failed.kind, "failed");
  const internal = new CsiError("/csi.v1.Controller/GetCapacity", 13, "boom");
  const proceed = await askCapacity(
    target,
    { csi: driver([internal]), options: options() },
    signal,
  );
  deepStrictEqual(proceed, {
    kind: "unknown",
    message: "GetCapacity failed: rpc error: code = Internal desc = boom",
  });
});

Deno.test("askCapacity: no GET_CAPACITY, or a request that cannot be built, leaves the room unknown", async () => {
  const csi = driver([]);
  const none = await askCapacity(
    target,
    { csi, options: options({ getCapacity: false }) },
    signal,
  );
  strictEqual(none.kind, "unknown");
  const selector = { ...target, claim: claim({ spec: { selector: { matchLabels: { a: "b" } } } }) };
  const bad = await askCapacity(selector, { csi, options: options() }, signal);
  deepStrictEqual(bad, {
    kind: "unknown",
    message: `claim Selector is not supported (PersistentVolumeClaim "apps/data", spec.selector)`,
  });
  strictEqual(csi.requests.length, 0);
});

Deno.test("askCapacity: each requisite topology in turn until one has room", async () => {
  const allowed = storageClass({
    volumeBindingMode: "Immediate",
    allowedTopologies: [{
      matchLabelExpressions: [{ key: TOPOLOGY_KEY, values: [NODE, "node-b"] }],
    }],
  });
  const csi = driver([answer(0n), answer(2n * GI)]);
  const result = await askCapacity(
    { ...target, storageClass: allowed },
    { csi, options: options({ prepare: provisionOptions({ strictTopology: false }) }) },
    signal,
  );
  deepStrictEqual(result, { kind: "fits", availableBytes: 2n * GI });
  deepStrictEqual(csi.requests.map((request) => request.accessible_topology?.segments), [
    SEGMENT,
    { [TOPOLOGY_KEY]: "node-b" },
  ]);
});
