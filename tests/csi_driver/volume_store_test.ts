import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import { status } from "@grpc/grpc-js";
import { CsiError } from "./csi_error.ts";
import { GiB, MiB } from "./quantity.ts";
import { type AllocationRequest, VolumeStore } from "./volume_store.ts";

function storeWithPools(): VolumeStore {
  return new VolumeStore([
    { kind: "fast", sizeBytes: 10 * GiB, maxVolumeSizeBytes: null },
    { kind: "slow", sizeBytes: 1 * GiB, maxVolumeSizeBytes: 512 * MiB },
  ]);
}

let counter = 0;
function request(name: string, requiredBytes: number, kind?: string): AllocationRequest {
  return {
    name,
    requiredBytes,
    limitBytes: null,
    parameters: kind === undefined ? {} : { kind },
    mutableParameters: {},
    createdAt: new Date("2025-01-01T00:00:00Z"),
    newId: () => `vol-${++counter}`,
  };
}

function rejects(code: number, fn: () => unknown, text: RegExp): void {
  throws(fn, (error: unknown) => {
    if (!(error instanceof CsiError)) return false;
    strictEqual(error.code, code, error.message);
    strictEqual(text.test(error.message), true, error.message);
    return true;
  });
}

Deno.test("allocating by kind takes the bytes from that pool only", () => {
  const store = storeWithPools();
  const { volume, created } = store.allocate(request("pvc-1", 3 * GiB, "fast"));
  strictEqual(created, true);
  deepStrictEqual([volume.kind, volume.sizeBytes, volume.parameters], ["fast", 3 * GiB, {
    kind: "fast",
  }]);
  deepStrictEqual(store.pools().map((p) => [p.kind, p.usedBytes, p.availableBytes]), [
    ["fast", 3 * GiB, 7 * GiB],
    ["slow", 0, 1 * GiB],
  ]);
});

Deno.test("the same name and a fitting size returns the existing volume without allocating again", () => {
  const store = storeWithPools();
  const first = store.allocate(request("pvc-1", 1 * GiB, "fast"));
  const second = store.allocate(request("pvc-1", 1 * GiB, "fast"));
  strictEqual(second.created, false);
  strictEqual(second.volume.id, first.volume.id);
  strictEqual(store.pools()[0]?.usedBytes, 1 * GiB);
  strictEqual(store.volumes().length, 1);
});

Deno.test("the same name with a larger size, a too small limit or another kind is AlreadyExists", () => {
  const store = storeWithPools();
  store.allocate(request("pvc-1", 1 * GiB, "fast"));
  rejects(status.ALREADY_EXISTS, () => store.allocate(request("pvc-1", 2 * GiB, "fast")), /pvc-1/);
  rejects(status.ALREADY_EXISTS, () => store.allocate(request("pvc-1", 1 * GiB, "slow")), /slow/);
  rejects(status.ALREADY_EXISTS, () => store.allocate(request("pvc-1", 1 * GiB)), /\(none\)/);
  const limited = { ...request("pvc-1", MiB, "fast"), limitBytes: 2 * MiB };
  rejects(status.ALREADY_EXISTS, () => store.allocate(limited), /limit/);
});

Deno.test("an unknown kind is InvalidArgument naming the kind", () => {
  rejects(
    status.INVALID_ARGUMENT,
    () => storeWithPools().allocate(request("pvc-1", MiB, "ssd")),
    /"ssd"/,
  );
});

Deno.test("a full pool is ResourceExhausted naming pool, requested and available bytes", () => {
  const store = storeWithPools();
  store.allocate(request("pvc-1", 9 * GiB, "fast"));
  rejects(
    status.RESOURCE_EXHAUSTED,
    () => store.allocate(request("pvc-2", 2 * GiB, "fast")),
    new RegExp(`"fast".*${2 * GiB} bytes.*${1 * GiB} bytes available`),
  );
  rejects(
    status.RESOURCE_EXHAUSTED,
    () => store.allocate(request("pvc-3", 600 * MiB, "slow")),
    /at most 536870912 bytes per volume/,
  );
  strictEqual(store.volumes().length, 1);
});

Deno.test("without a kind the first pool in flag order with room is used", () => {
  const store = storeWithPools();
  strictEqual(store.allocate(request("pvc-1", 10 * GiB)).volume.kind, "fast");
  strictEqual(store.allocate(request("pvc-2", 100 * MiB)).volume.kind, "slow");
  rejects(status.RESOURCE_EXHAUSTED, () => store.allocate(request("pvc-3", GiB)), /"fast".*"slow"/);
});

Deno.test("removing a volume frees its bytes and a second removal finds nothing", () => {
  const store = storeWithPools();
  const { volume } = store.allocate(request("pvc-1", 4 * GiB, "fast"));
  strictEqual(store.remove(volume.id)?.name, "pvc-1");
  strictEqual(store.remove(volume.id), undefined);
  strictEqual(store.capacity("fast").availableBytes, 10 * GiB);
  strictEqual(store.allocate(request("pvc-1", 4 * GiB, "fast")).created, true);
});

Deno.test("capacity per kind, for all kinds and for unknown kinds", () => {
  const store = storeWithPools();
  store.allocate(request("pvc-1", 2 * GiB, "fast"));
  deepStrictEqual(store.capacity("fast"), {
    availableBytes: 8 * GiB,
    maximumVolumeSizeBytes: 8 * GiB,
  });
  deepStrictEqual(store.capacity("slow"), {
    availableBytes: GiB,
    maximumVolumeSizeBytes: 512 * MiB,
  });
  deepStrictEqual(store.capacity(undefined), {
    availableBytes: 9 * GiB,
    maximumVolumeSizeBytes: 8 * GiB,
  });
  deepStrictEqual(store.capacity("ssd"), { availableBytes: 0, maximumVolumeSizeBytes: 0 });
});

Deno.test("shrinking a pool below its use leaves nothing available and keeps the volumes", () => {
  const store = storeWithPools();
  store.allocate(request("pvc-1", 3 * GiB, "fast"));
  deepStrictEqual(store.resizePool("fast", 2 * GiB), {
    kind: "fast",
    sizeBytes: 2 * GiB,
    usedBytes: 3 * GiB,
    availableBytes: 0,
    maxVolumeSizeBytes: null,
  });
  strictEqual(store.capacity("slow").maximumVolumeSizeBytes, 512 * MiB);
  strictEqual(store.resizePool("slow", GiB, null).maxVolumeSizeBytes, null);
  throws(() => store.resizePool("ssd", GiB), /no pool of kind "ssd"/);
});

Deno.test("volumes given at construction count against their pools", () => {
  const source = storeWithPools();
  source.allocate(request("pvc-1", 3 * GiB, "fast"));
  const reloaded = new VolumeStore(
    [{ kind: "fast", sizeBytes: 10 * GiB, maxVolumeSizeBytes: null }],
    source.volumes(),
  );
  strictEqual(reloaded.capacity("fast").availableBytes, 7 * GiB);
  strictEqual(reloaded.allocate(request("pvc-1", 3 * GiB, "fast")).created, false);
});
