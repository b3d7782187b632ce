import { deepStrictEqual, strictEqual } from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { status } from "@grpc/grpc-js";
import type {
  CreateVolumeResponse,
  GetCapacityResponse,
  NodeGetInfoResponse,
} from "../../lib/csi/types.ts";
import { startTestDriver } from "./driver.ts";
import { GiB, MiB } from "./quantity.ts";
import { connectCsi } from "./test_client.ts";
import { baseOptions, createRequest, withDriver, withTempDir } from "./test_support.ts";

const TOPOLOGY = { "topology.test.csi.k8s.io/node": "node-a" };

Deno.test("CreateVolume with the same name twice returns the same volume and allocates once", async () => {
  await withDriver({}, async ({ driver, csi }) => {
    const first = await csi.call<CreateVolumeResponse>(
      "CreateVolume",
      createRequest("pvc-1", { bytes: GiB, kind: "fast" }),
    );
    const second = await csi.call<CreateVolumeResponse>(
      "CreateVolume",
      createRequest("pvc-1", { bytes: GiB, kind: "fast" }),
    );
    strictEqual(second.volume?.volume_id, first.volume?.volume_id);
    deepStrictEqual(first.volume, {
      capacity_bytes: String(GiB),
      volume_id: first.volume?.volume_id,
      volume_context: { kind: "fast", nodeID: "node-a" },
      content_source: null,
      accessible_topology: [{ segments: TOPOLOGY }],
    });
    strictEqual((await driver.control.pools())[0]?.usedBytes, GiB);
    strictEqual((await driver.control.volumes()).length, 1);
  });
});

Deno.test("with volume IDs made from names, the ID is the volume name, the same on every node", async () => {
  await withDriver({ volumeIds: "name" }, async ({ driver, csi }) => {
    const created = await csi.call<CreateVolumeResponse>(
      "CreateVolume",
      createRequest("pvc-1", { kind: "fast" }),
    );
    strictEqual(created.volume?.volume_id, "pvc-1");
    deepStrictEqual((await driver.control.volumes()).map((volume) => volume.id), ["pvc-1"]);
    await csi.call("DeleteVolume", { volume_id: "pvc-1", secrets: {} });
    deepStrictEqual(await driver.control.volumes(), []);
  });
});

Deno.test("CreateVolume with the same name and a larger size is AlreadyExists", async () => {
  await withDriver({}, async ({ csi }) => {
    await csi.call("CreateVolume", createRequest("pvc-1", { bytes: GiB, kind: "fast" }));
    const error = await csi.fail(
      "CreateVolume",
      createRequest("pvc-1", { bytes: 2 * GiB, kind: "fast" }),
    );
    strictEqual(error.code, status.ALREADY_EXISTS);
  });
});

Deno.test("a full pool answers ResourceExhausted naming pool and sizes, and creates nothing", async () => {
  await withDriver({}, async ({ driver, csi }) => {
    await csi.call("CreateVolume", createRequest("pvc-1", { bytes: 800 * MiB, kind: "slow" }));
    const error = await csi.fail(
      "CreateVolume",
      createRequest("pvc-2", { bytes: 300 * MiB, kind: "slow" }),
    );
    strictEqual(error.code, status.RESOURCE_EXHAUSTED);
    strictEqual(
      error.details,
      `pool "slow" cannot hold ${300 * MiB} bytes: ${224 * MiB} bytes available of ${GiB}`,
    );
    deepStrictEqual((await driver.control.volumes()).map((v) => v.name), ["pvc-1"]);
  });
});

Deno.test("GetCapacity follows creates and deletes, per kind and in total", async () => {
  await withDriver({}, async ({ csi }) => {
    const capacity = async (parameters: Record<string, string>) => {
      const answer = await csi.call<GetCapacityResponse>("GetCapacity", { parameters });
      return [Number(answer.available_capacity), Number(answer.maximum_volume_size?.value)];
    };
    deepStrictEqual(await capacity({ kind: "fast" }), [10 * GiB, 10 * GiB]);
    const created = await csi.call<CreateVolumeResponse>(
      "CreateVolume",
      createRequest("pvc-1", { bytes: 4 * GiB, kind: "fast" }),
    );
    deepStrictEqual(await capacity({ kind: "fast" }), [6 * GiB, 6 * GiB]);
    deepStrictEqual(await capacity({}), [7 * GiB, 6 * GiB]);
    deepStrictEqual(await capacity({ kind: "ssd" }), [0, 0]);
    await csi.call("DeleteVolume", { volume_id: created.volume?.volume_id, secrets: {} });
    deepStrictEqual(await capacity({ kind: "fast" }), [10 * GiB, 10 * GiB]);
  });
});

Deno.test("GetCapacity for another node's topology is zero and for this node's is the pool", async () => {
  await withDriver({}, async ({ csi }) => {
    const available = async (segments: Record<string, string>) =>
      Number(
        (await csi.call<GetCapacityResponse>("GetCapacity", {
          parameters: { kind: "slow" },
          accessible_topology: { segments },
        })).available_capacity,
      );
    strictEqual(await available({ "topology.test.csi.k8s.io/node": "node-b" }), 0);
    strictEqual(await available({ "other.key/zone": "a" }), 0);
    strictEqual(await available(TOPOLOGY), GiB);
  });
});

Deno.test("DeleteVolume of an unknown id succeeds and changes nothing", async () => {
  await withDriver({}, async ({ driver, csi }) => {
    await csi.call("CreateVolume", createRequest("pvc-1", { kind: "fast" }));
    deepStrictEqual(await csi.call("DeleteVolume", { volume_id: "no-such-volume" }), {});
    strictEqual((await driver.control.volumes()).length, 1);
    strictEqual((await csi.fail("DeleteVolume", { volume_id: "" })).code, status.INVALID_ARGUMENT);
  });
});

Deno.test("CreateVolume rejects requests the driver cannot honour with the spec's codes", async () => {
  await withDriver({}, async ({ driver, csi }) => {
    const base = createRequest("pvc-1", { kind: "fast" }) as Record<string, unknown>;
    const cases: Array<[Record<string, unknown>, number, RegExp]> = [
      [{ ...base, name: "" }, status.INVALID_ARGUMENT, /name is required/],
      [{ ...base, volume_capabilities: [] }, status.INVALID_ARGUMENT, /volume_capabilities/],
      [{ ...base, parameters: { kind: "ssd" } }, status.INVALID_ARGUMENT, /"ssd"/],
      [
        { ...base, volume_content_source: { volume: { volume_id: "x" } } },
        status.INVALID_ARGUMENT,
        /content sources/,
      ],
      [
        { ...base, capacity_range: { required_bytes: "10", limit_bytes: "5" } },
        status.OUT_OF_RANGE,
        /limit_bytes/,
      ],
      [{ ...base, mutable_parameters: { iops: "5" } }, status.INVALID_ARGUMENT, /MODIFY_VOLUME/],
      [
        {
          ...base,
          volume_capabilities: [{ mount: {}, access_mode: { mode: "SINGLE_NODE_SINGLE_WRITER" } }],
        },
        status.INVALID_ARGUMENT,
        /SINGLE_NODE_MULTI_WRITER/,
      ],
      [
        {
          ...base,
          accessibility_requirements: {
            requisite: [{ segments: { "topology.test.csi.k8s.io/node": "node-b" } }],
          },
        },
        status.RESOURCE_EXHAUSTED,
        /node-b/,
      ],
    ];
    for (const [request, code, text] of cases) {
      const error = await csi.fail("CreateVolume", request);
      strictEqual(error.code, code, `${error.details} for ${JSON.stringify(request)}`);
      strictEqual(text.test(error.details), true, error.details);
    }
    deepStrictEqual(await driver.control.volumes(), []);
  });
});

Deno.test("CreateVolume without a size gets 1Mi, without a kind the first pool with room", async () => {
  await withDriver({}, async ({ driver, csi }) => {
    const request = { ...createRequest("pvc-1") as Record<string, unknown>, capacity_range: null };
    const response = await csi.call<CreateVolumeResponse>("CreateVolume", request);
    strictEqual(response.volume?.capacity_bytes, String(MiB));
    await csi.call("CreateVolume", createRequest("pvc-2", { bytes: 10 * GiB - MiB }));
    await csi.call("CreateVolume", createRequest("pvc-3", { bytes: MiB }));
    deepStrictEqual((await driver.control.volumes()).map((v) => [v.name, v.kind]), [
      ["pvc-1", "fast"],
      ["pvc-2", "fast"],
      ["pvc-3", "slow"],
    ]);
  });
});

Deno.test("identity, controller and node answers reflect the options", async () => {
  await withDriver({
    driverName: "x.example.com",
    vendorVersion: "1.2.3",
    controllerCapabilities: ["CREATE_DELETE_VOLUME", "SINGLE_NODE_MULTI_WRITER"],
    pluginCapabilities: ["CONTROLLER_SERVICE"],
  }, async ({ csi }) => {
    deepStrictEqual(await csi.call("GetPluginInfo"), {
      name: "x.example.com",
      vendor_version: "1.2.3",
      manifest: {},
    });
    deepStrictEqual(await csi.call("GetPluginCapabilities"), {
      capabilities: [{ service: { type: "CONTROLLER_SERVICE" }, type: "service" }],
    });
    deepStrictEqual(await csi.call("ControllerGetCapabilities"), {
      capabilities: [
        { rpc: { type: "CREATE_DELETE_VOLUME" }, type: "rpc" },
        { rpc: { type: "SINGLE_NODE_MULTI_WRITER" }, type: "rpc" },
      ],
    });
    deepStrictEqual(await csi.call("Probe"), { ready: { value: true } });
    deepStrictEqual(await csi.call<NodeGetInfoResponse>("NodeGetInfo"), {
      node_id: "node-a",
      max_volumes_per_node: "0",
      accessible_topology: { segments: TOPOLOGY },
    });
  });
});

Deno.test("the call log strips secrets but lists their keys", async () => {
  await withDriver({}, async ({ driver, csi }) => {
    const request = {
      ...createRequest("pvc-1", { kind: "fast" }),
      secrets: { password: "hunter2" },
    };
    await csi.call("CreateVolume", request);
    const [call] = await driver.control.calls("CreateVolume");
    deepStrictEqual([call?.codeName, call?.secretKeys], ["OK", ["password"]]);
    strictEqual(JSON.stringify(await driver.control.calls()).includes("hunter2"), false);
    deepStrictEqual((call?.request as { secrets: unknown }).secrets, {
      password: "***stripped***",
    });
  });
});

Deno.test("volumes in the state dir survive a restart and keep their pool use", async () => {
  await withTempDir(async (dir) => {
    const options = baseOptions(dir, { stateDir: path.join(dir, "state") });
    const first = await startTestDriver(options);
    const csi = connectCsi(first.endpoint);
    let created: CreateVolumeResponse;
    try {
      created = await csi.call<CreateVolumeResponse>(
        "CreateVolume",
        createRequest("pvc-1", { bytes: GiB, kind: "fast" }),
      );
    } finally {
      csi.close();
      await first.stop();
    }
    strictEqual(fs.existsSync(path.join(dir, "csi.sock")), false, "stop removes the socket");
    const second = await startTestDriver(options);
    const again = connectCsi(second.endpoint);
    try {
      deepStrictEqual((await second.control.volumes()).map((v) => v.id), [
        created.volume?.volume_id,
      ]);
      strictEqual((await second.control.pools())[0]?.availableBytes, 9 * GiB);
      const retried = await again.call<CreateVolumeResponse>(
        "CreateVolume",
        createRequest("pvc-1", { bytes: GiB, kind: "fast" }),
      );
      strictEqual(retried.volume?.volume_id, created.volume?.volume_id);
    } finally {
      again.close();
      await second.stop();
    }
  });
});

Deno.test("stop closes both sockets, removes their files and may be called twice", async () => {
  await withTempDir(async (dir) => {
    const controlPath = path.join(dir, "control.sock");
    const driver = await startTestDriver(baseOptions(dir, { controlEndpoint: controlPath }));
    strictEqual(fs.lstatSync(controlPath).isSocket(), true);
    await Promise.all([driver.stop(), driver.stop()]);
    deepStrictEqual(fs.readdirSync(dir), []);
    const csi = connectCsi(driver.endpoint);
    try {
      strictEqual((await csi.fail("Probe", {}, { deadlineMs: 500 })).code, status.UNAVAILABLE);
    } finally {
      csi.close();
    }
  });
});

Deno.test("startTestDriver refuses bad options, listing every problem", async () => {
  await withTempDir(async (dir) => {
    let message = "";
    await startTestDriver(baseOptions(dir, { nodeId: "", pools: [{ kind: "fast", size: "huge" }] }))
      .then(
        (driver) => driver.stop(),
        (error: Error) => message = error.message,
      );
    strictEqual(
      message,
      'invalid test driver options: a node id is required (--node-id); pool "fast": "huge" is not a size (examples: 10Gi, 500Mi, 1G, 1048576)',
    );
  });
});
