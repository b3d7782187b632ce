import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { CsiError } from "../csi/status.ts";
import type { ControllerExpandVolumeRequest } from "../csi/types.ts";
import type { EventRecord } from "../model/events.ts";
import type { Claim } from "../model/objects.ts";
import { quiet } from "../../tests/fakes/logger.ts";
import { DRIVER, NODE, storageClass } from "../../tests/builders/provision.ts";
import { boundClaim, boundVolume, PV_NAME } from "../../tests/builders/resize.ts";
import { ResizeController } from "./controller.ts";
import { ResizeMemory } from "./memory.ts";
import type { ResizePorts } from "./ports.ts";

const KEY = "apps/data";
const signal = new AbortController().signal;

/** A world of one claim: the writes and calls made, in order. */
function world(options: {
  claim?: Claim;
  answer?: () => Promise<{ capacity_bytes: string; node_expansion_required: boolean }>;
  free?: bigint;
}) {
  const log: string[] = [];
  const events: EventRecord[] = [];
  const requests: ControllerExpandVolumeRequest[] = [];
  let claim = options.claim ?? boundClaim();
  const ports: ResizePorts = {
    claims: { get: (key) => (key === KEY ? claim : undefined) },
    volumes: { get: (name) => (name === PV_NAME ? boundVolume() : undefined) },
    classes: { get: () => storageClass({ allowVolumeExpansion: true }) },
    api: {
      patchClaimStatus: (_before, patch) => {
        log.push(`claim ${JSON.stringify((patch as { status: unknown }).status)}`);
        const status = (patch as { status: Claim["status"] }).status;
        claim = { ...claim, status: { ...claim.status, ...status } };
        return Promise.resolve(claim);
      },
      patchVolumeCapacity: (name, size) => {
        log.push(`pv ${name} ${size}`);
        return Promise.resolve();
      },
      readSecretData: () => Promise.resolve({}),
    },
    csi: {
      controllerExpandVolume: (request) => {
        requests.push(request);
        log.push(`expand ${request.capacity_range?.required_bytes}`);
        return options.answer?.() ??
          Promise.resolve({ capacity_bytes: String(2n ** 31n), node_expansion_required: true });
      },
    },
    events: { record: (event) => events.push(event) },
    ...(options.free === undefined ? {} : { publishedFree: () => options.free }),
  };
  const memory = new ResizeMemory({ retentionMs: 300_000 });
  const controller = new ResizeController(ports, memory, {
    driverName: DRIVER,
    nodeName: NODE,
    singleNodeMultiWriter: false,
    now: () => new Date("2026-12-02T13:00:00Z"),
  }, quiet);
  return { controller, log, events, requests, claim: () => claim };
}

const reasons = (events: EventRecord[]) => events.map((event) => `${event.type} ${event.reason}`);

Deno.test("sync(): the target is recorded before the call, then the PV, then FileSystemResizePending", async () => {
  const w = world({});
  deepStrictEqual(await w.controller.sync(KEY, signal), { kind: "done" });
  strictEqual(w.log[0]?.includes('"allocatedResources":{"storage":"2Gi"}'), true);
  strictEqual(w.log[0]?.includes("ControllerResizeInProgress"), true);
  deepStrictEqual(w.log.slice(1, 3), [`expand ${2n ** 31n}`, `pv ${PV_NAME} 2Gi`]);
  strictEqual(w.log[3]?.includes("NodeResizePending"), true);
  deepStrictEqual(reasons(w.events), ["Normal Resizing", "Normal FileSystemResizeRequired"]);
  strictEqual(w.events[0]?.message, `External resizer is resizing volume ${PV_NAME}`);
});

Deno.test("sync(): beyond the pool, the claim is marked infeasible, with the Warning naming the node", async () => {
  const w = world({
    claim: boundClaim({ request: "100Gi" }),
    answer: () => Promise.reject(new CsiError("ControllerExpandVolume", 11, "too big")),
    free: 2n ** 30n,
  });
  strictEqual((await w.controller.sync(KEY, signal)).kind, "retry");
  strictEqual(w.claim().status?.allocatedResourceStatuses?.storage, "ControllerResizeInfeasible");
  deepStrictEqual(reasons(w.events), [
    "Normal Resizing",
    "Warning ExpansionExceedsCapacity",
    "Warning VolumeResizeFailed",
  ]);
  strictEqual(w.events[1]?.message.includes(`node ${NODE}`), true);
  strictEqual(w.events[1]?.message.includes("published 1Gi free"), true);
  strictEqual(
    w.events[2]?.message,
    `resize volume "${PV_NAME}" by resizer "${DRIVER}" failed: rpc error: code = OutOfRange desc = too big`,
  );
  // The same size again waits in the slow set (after one more try, as upstream).
  await w.controller.sync(KEY, signal);
  strictEqual((await w.controller.sync(KEY, signal)).kind, "retryAfter");
});

Deno.test("sync(): a call that timed out leaves the recorded size to be finished, no new target", async () => {
  let calls = 0;
  const w = world({
    answer: () =>
      calls++ === 0
        ? Promise.reject(new CsiError("ControllerExpandVolume", 4, "deadline"))
        : Promise.resolve({ capacity_bytes: String(2n ** 31n), node_expansion_required: true }),
  });
  strictEqual((await w.controller.sync(KEY, signal)).kind, "retry");
  strictEqual(w.claim().status?.allocatedResourceStatuses?.storage, "ControllerResizeInProgress");
  strictEqual(await w.controller.sync(KEY, signal).then((o) => o.kind), "done");
  deepStrictEqual(w.requests.map((r) => r.capacity_range?.required_bytes), [
    String(2n ** 31n),
    String(2n ** 31n),
  ]);
});
