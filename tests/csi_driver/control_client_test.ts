import { deepStrictEqual, rejects, strictEqual } from "node:assert/strict";
import * as http from "node:http";
import * as path from "node:path";
import { ControlRequestError, DriverControl } from "./control_client.ts";
import { GiB } from "./quantity.ts";
import { createRequest, withDriver } from "./test_support.ts";

type Fixture = Parameters<Parameters<typeof withDriver>[1]>[0] & { control: DriverControl };

Deno.test("DriverControl reads volumes, pools and calls the driver recorded", async () => {
  await withDriverAndControl(async ({ control, csi, driver }) => {
    await csi.call("CreateVolume", {
      ...createRequest("pvc-1", { bytes: GiB, kind: "fast" }),
      secrets: { token: "t" },
    });
    await csi.call("Probe");
    deepStrictEqual(await control.volumes(), await driver.control.volumes());
    const [volume] = await control.volumes();
    deepStrictEqual([volume?.name, volume?.kind, volume?.sizeBytes, volume?.parameters], [
      "pvc-1",
      "fast",
      GiB,
      { kind: "fast" },
    ]);
    deepStrictEqual((await control.pools()).map((p) => [p.kind, p.usedBytes, p.availableBytes]), [
      ["fast", GiB, 9 * GiB],
      ["slow", 0, GiB],
    ]);
    deepStrictEqual((await control.calls()).map((c) => c.method), ["CreateVolume", "Probe"]);
    const [create] = await control.calls("CreateVolume");
    deepStrictEqual([create?.codeName, create?.secretKeys], ["OK", ["token"]]);
    await control.clearCalls();
    deepStrictEqual(await control.calls(), []);
  });
});

Deno.test("DriverControl arms and clears faults that the CSI socket then shows", async () => {
  await withDriverAndControl(async ({ control, csi }) => {
    await control.setFault({ method: "CreateVolume", code: "ResourceExhausted", times: 1 });
    deepStrictEqual(
      (await control.faults()).map((f) => [f.method, f.error?.code, f.error?.remaining]),
      [
        ["CreateVolume", 8, 1],
      ],
    );
    strictEqual((await csi.fail("CreateVolume", createRequest("pvc-1"))).code, 8);
    await control.setFault({ method: "Probe", notReady: true });
    await control.setFault({ method: "GetCapacity", latencyMs: 5 });
    await control.clearFaults("Probe");
    deepStrictEqual((await control.faults()).map((f) => f.method), ["GetCapacity"]);
    await control.clearFaults();
    deepStrictEqual(await control.faults(), []);
  });
});

Deno.test("DriverControl resizes a pool and GetCapacity follows", async () => {
  await withDriverAndControl(async ({ control, csi }) => {
    const resized = await control.resizePool("slow", "3Gi", { maxVolumeSize: "1Gi" });
    deepStrictEqual(resized, {
      kind: "slow",
      sizeBytes: 3 * GiB,
      usedBytes: 0,
      availableBytes: 3 * GiB,
      maxVolumeSizeBytes: GiB,
    });
    const answer = await csi.call<
      { available_capacity: string; maximum_volume_size: { value: string } }
    >(
      "GetCapacity",
      { parameters: { kind: "slow" } },
    );
    deepStrictEqual([answer.available_capacity, answer.maximum_volume_size.value], [
      String(3 * GiB),
      String(GiB),
    ]);
    strictEqual(
      (await control.resizePool("slow", 0, { maxVolumeSize: null })).maxVolumeSizeBytes,
      null,
    );
  });
});

Deno.test("DriverControl surfaces refusals with their HTTP status and the driver's reason", async () => {
  await withDriverAndControl(async ({ control }) => {
    const refused = (status: number, text: RegExp) => (error: unknown) =>
      error instanceof ControlRequestError && error.status === status && text.test(error.message);
    await rejects(control.resizePool("ssd", "1Gi"), refused(404, /no pool of kind "ssd"/));
    await rejects(control.resizePool("fast", "lots"), refused(400, /"lots" is not a size/));
    await rejects(
      control.setFault({ method: "Nope" as "Probe", code: 8 }),
      refused(400, /method must be one of/),
    );
    await rejects(control.calls("Nope" as "Probe"), refused(400, /unknown method "Nope"/));
  });
});

Deno.test("the control endpoint answers bad bodies and unknown routes with JSON errors", async () => {
  await withDriverAndControl(async ({ control }) => {
    deepStrictEqual(await raw(control.socketPath, "POST", "/faults", "{oops"), [400, {
      error: "the request body must be JSON",
    }]);
    deepStrictEqual(await raw(control.socketPath, "PUT", "/pools/fast", "[]"), [400, {
      error: "the request body must be a JSON object",
    }]);
    deepStrictEqual(await raw(control.socketPath, "GET", "/nothing"), [404, {
      error: "no route GET /nothing",
    }]);
  });
});

Deno.test("DriverControl fails fast with the socket named when nothing listens", async () => {
  const control = new DriverControl("unix:///nonexistent/dir/control.sock", { timeoutMs: 2000 });
  await rejects(control.pools(), /control GET \/pools: .*(ENOENT|No such file)/i);
});

/** A driver with a control socket, and a DriverControl on it. */
async function withDriverAndControl(fn: (fixture: Fixture) => Promise<void>): Promise<void> {
  await withDriver(
    (dir) => ({ controlEndpoint: `unix://${path.join(dir, "control.sock")}` }),
    async (fixture) => {
      const controlEndpoint = fixture.driver.controlEndpoint;
      if (controlEndpoint === null) throw new Error("no control endpoint");
      await fn({ ...fixture, control: new DriverControl(controlEndpoint) });
    },
  );
}

function raw(
  socketPath: string,
  method: string,
  route: string,
  body?: string,
): Promise<[number, unknown]> {
  return new Promise((resolve, reject) => {
    const request = http.request({ socketPath, method, path: route, agent: false }, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => text += chunk);
      response.on("end", () => resolve([response.statusCode ?? 0, JSON.parse(text)]));
    });
    request.on("error", reject);
    request.end(body);
  });
}
