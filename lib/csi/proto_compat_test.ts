/**
 * The switch from the hand-written subset (proto/testdata/csi_subset.proto)
 * loaded through @grpc/proto-loader to upstream's full csi.proto loaded by
 * lib/csi/proto.ts changed nothing the agent sends or reads: every request
 * it builds encodes to the same bytes, and every response decodes to the
 * same values in every field the subset had.
 */
import { deepStrictEqual } from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import protobuf from "protobufjs";
import { type CsiServices, loadCsiServices } from "./proto.ts";

type ServiceClientConstructor = grpc.ServiceClientConstructor;

/** The agent's CSI services before the switch: the subset, through proto-loader, as then. */
function subsetServices(): CsiServices {
  const root = new protobuf.Root();
  const wrappers = protobuf.common.get("google/protobuf/wrappers.proto")?.nested;
  if (wrappers === undefined) throw new Error("protobufjs lacks wrappers.proto");
  root.addJSON(wrappers);
  const text = readFileSync(
    new URL("../../proto/testdata/csi_subset.proto", import.meta.url),
    "utf8",
  );
  protobuf.parse(text, root, { keepCase: true });
  root.resolveAll();
  const definition = protoLoader.fromJSON(root.toJSON(), {
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const v1 = (grpc.loadPackageDefinition(definition)["csi"] as grpc.GrpcObject)["v1"];
  const service = (name: string) => (v1 as grpc.GrpcObject)[name] as ServiceClientConstructor;
  return {
    Identity: service("Identity"),
    Controller: service("Controller"),
    Node: service("Node"),
  };
}

const subset = subsetServices();
const full = loadCsiServices();

type Service = keyof CsiServices;
type Method = ServiceClientConstructor["service"][string];

function method(services: CsiServices, service: Service, name: string): Method {
  const found = services[service].service[name];
  if (found === undefined) throw new Error(`no ${service}.${name}`);
  return found;
}

const topology = (node: string) => ({ segments: { "topology.hostpath.csi/node": node } });
const mount = {
  mount: { fs_type: "ext4", mount_flags: ["noatime", "ro"], volume_mount_group: "1000" },
  access_mode: { mode: "SINGLE_NODE_WRITER" },
};
const block = { block: {}, access_mode: { mode: "SINGLE_NODE_SINGLE_WRITER" } };

/** Every request the agent sends, with every field it can set, each oneof both ways. */
const REQUESTS: [Service, string, object][] = [
  ["Identity", "GetPluginInfo", {}],
  ["Identity", "GetPluginCapabilities", {}],
  ["Identity", "Probe", {}],
  ["Controller", "ControllerGetCapabilities", {}],
  ["Node", "NodeGetInfo", {}],
  ["Controller", "CreateVolume", {
    name: "pvc-0b5e4c9e-6f1d-4d0e-9a57-3c1b2a1d9e01",
    capacity_range: { required_bytes: "1073741824", limit_bytes: "2147483648" },
    volume_capabilities: [mount, block],
    parameters: { kind: "fast", "csi.storage.k8s.io/pvc/name": "data" },
    secrets: { password: "hunter2" },
    volume_content_source: { snapshot: { snapshot_id: "snap-1" } },
    accessibility_requirements: {
      requisite: [topology("node-a"), topology("node-b")],
      preferred: [topology("node-a")],
    },
    mutable_parameters: { iops: "3000" },
  }],
  ["Controller", "CreateVolume", {
    name: "pvc-2",
    capacity_range: { required_bytes: "0" },
    volume_capabilities: [{ mount: { fs_type: "", mount_flags: [] }, access_mode: { mode: 1 } }],
    volume_content_source: { volume: { volume_id: "vol-src" } },
  }],
  ["Controller", "DeleteVolume", { volume_id: "vol-1", secrets: { token: "t0ps3cret" } }],
  ["Controller", "GetCapacity", {
    volume_capabilities: [mount],
    parameters: { kind: "slow" },
    accessible_topology: topology("node-a"),
  }],
  ["Controller", "GetCapacity", { parameters: {}, accessible_topology: { segments: {} } }],
];

Deno.test("every request the agent sends encodes to the same bytes with the full csi.proto", () => {
  for (const [service, name, request] of REQUESTS) {
    const before = method(subset, service, name).requestSerialize(request);
    const after = method(full, service, name).requestSerialize(request);
    deepStrictEqual(after, before, `${service}.${name} ${JSON.stringify(request)}`);
    // A server built on either schema (the test CSI driver) reads the same request back.
    deepStrictEqual(
      method(full, service, name).requestDeserialize(after),
      method(subset, service, name).requestDeserialize(before),
    );
  }
});

/**
 * Responses of drivers, with the fields the subset had and fields it left
 * out (unknown to the subset, so they cannot have been read before).
 */
const RESPONSES: [Service, string, object][] = [
  ["Identity", "GetPluginInfo", {
    name: "hostpath.csi.k8s.io",
    vendor_version: "v1.18.0",
    manifest: { url: "https://example.com" },
  }],
  ["Identity", "GetPluginCapabilities", {
    capabilities: [
      { service: { type: "CONTROLLER_SERVICE" } },
      { service: { type: "VOLUME_ACCESSIBILITY_CONSTRAINTS" } },
      { volume_expansion: { type: "ONLINE" } },
    ],
  }],
  ["Identity", "Probe", { ready: { value: false } }],
  ["Identity", "Probe", {}],
  ["Controller", "ControllerGetCapabilities", {
    capabilities: ["CREATE_DELETE_VOLUME", "GET_CAPACITY", "CLONE_VOLUME", "MODIFY_VOLUME"]
      .map((type) => ({ rpc: { type } })),
  }],
  ["Node", "NodeGetInfo", {
    node_id: "node-a",
    max_volumes_per_node: "128",
    accessible_topology: topology("node-a"),
  }],
  ["Controller", "CreateVolume", {
    volume: {
      capacity_bytes: "1073741824",
      volume_id: "vol-1",
      volume_context: { kind: "fast" },
      content_source: { snapshot: { snapshot_id: "snap-1" } },
      accessible_topology: [topology("node-a")],
    },
  }],
  ["Controller", "DeleteVolume", {}],
  ["Controller", "GetCapacity", {
    available_capacity: "10737418240",
    maximum_volume_size: { value: "5368709120" },
    minimum_volume_size: { value: "1048576" },
  }],
  ["Controller", "GetCapacity", { available_capacity: "0" }],
];

/** `value` cut down to the keys that `shape` has, recursively. */
function projected(value: unknown, shape: unknown): unknown {
  if (Array.isArray(shape) && Array.isArray(value)) {
    return value.map((item, index) => projected(item, shape[index]));
  }
  if (shape === null || typeof shape !== "object" || value === null || typeof value !== "object") {
    return value;
  }
  return Object.fromEntries(
    Object.keys(shape).map((key) => [
      key,
      projected((value as Record<string, unknown>)[key], (shape as Record<string, unknown>)[key]),
    ]),
  );
}

Deno.test("every response decodes to the same values in every field the subset had", () => {
  for (const [service, name, response] of RESPONSES) {
    for (const encoder of [subset, full]) {
      const bytes = method(encoder, service, name).responseSerialize(response);
      const before = method(subset, service, name).responseDeserialize(bytes);
      const after = method(full, service, name).responseDeserialize(bytes);
      deepStrictEqual(projected(after, before), before, `${service}.${name}`);
    }
  }
});

Deno.test("capability names the subset lacked decode as names instead of numbers", () => {
  // The subset's messages had every field of their upstream counterparts;
  // the one difference in what is read: ControllerServiceCapability.RPC.Type
  // GET_SNAPSHOT (15, CSI 1.11) was missing, so it decoded as the number 15.
  // The agent only looks for the names it needs (CREATE_DELETE_VOLUME, ...).
  const response = { capabilities: [{ rpc: { type: "GET_SNAPSHOT" } }] };
  const bytes = method(full, "Controller", "ControllerGetCapabilities").responseSerialize(response);
  const decode = (services: CsiServices) =>
    method(services, "Controller", "ControllerGetCapabilities").responseDeserialize(bytes)
      .capabilities[0].rpc.type;
  deepStrictEqual([decode(subset), decode(full)], [15, "GET_SNAPSHOT"]);
});
