import { deepStrictEqual, rejects, strictEqual } from "node:assert/strict";
import type { CsiCaller } from "../../csi/connection.ts";
import { CsiController } from "../../csi/controller_service.ts";
import { refreshingCapacity } from "./refresh.ts";

/** A driver that answers CreateVolume, fails DeleteVolume and answers GetCapacity. */
const driver: CsiCaller = {
  call: (method) => {
    if (method === "DeleteVolume") return Promise.reject(new Error("ResourceExhausted"));
    if (method === "CreateVolume") return Promise.resolve({ volume: null } as never);
    return Promise.resolve({ available_capacity: "1" } as never);
  },
};

Deno.test("refreshingCapacity(): every desired class is refreshed once the call answered, even a failure", async () => {
  const refreshed: string[] = [];
  const csi = refreshingCapacity(driver, { refreshAll: () => refreshed.push("all") });
  const volumes = new CsiController(csi);
  deepStrictEqual(await volumes.createVolume({ name: "pvc-1" } as never), { volume: null });
  await rejects(volumes.deleteVolume({ volume_id: "v-1", secrets: {} }), /ResourceExhausted/);
  deepStrictEqual(refreshed, ["all", "all"]);
});

Deno.test("refreshingCapacity(): calls that change no pool refresh nothing", async () => {
  const refreshed: string[] = [];
  const csi = refreshingCapacity(driver, { refreshAll: () => refreshed.push("all") });
  const answer = await csi.call("GetCapacity", {
    volume_capabilities: [],
    parameters: {},
    accessible_topology: null,
  });
  strictEqual(answer.available_capacity, "1");
  deepStrictEqual(refreshed, []);
});

Deno.test("refreshingCapacity(): an expansion refreshes too: the volume took more of the pool", async () => {
  const refreshed: string[] = [];
  const csi = refreshingCapacity(driver, { refreshAll: () => refreshed.push("all") });
  await new CsiController(csi).controllerExpandVolume(
    {
      volume_id: "v-1",
      capacity_range: { required_bytes: "2" },
      secrets: {},
      volume_capability: null,
    },
    new AbortController().signal,
  );
  deepStrictEqual(refreshed, ["all"]);
});
