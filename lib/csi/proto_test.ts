import { deepStrictEqual, ok } from "node:assert/strict";
import { loadCsiServices } from "./proto.ts";

Deno.test("loadCsiServices() exposes the CSI methods the agent calls, with their full gRPC paths", () => {
  const services = loadCsiServices();
  const paths = (ctor: { service: Record<string, { path: string }> }) =>
    Object.values(ctor.service).map((method) => method.path);
  const called = [
    ["Identity", "GetPluginInfo"],
    ["Identity", "GetPluginCapabilities"],
    ["Identity", "Probe"],
    ["Controller", "CreateVolume"],
    ["Controller", "DeleteVolume"],
    ["Controller", "GetCapacity"],
    ["Controller", "ControllerGetCapabilities"],
    ["Node", "NodeGetInfo"],
  ] as const;
  for (const [service, method] of called) {
    ok(paths(services[service]).includes(`/csi.v1.${service}/${method}`), `${service}/${method}`);
  }
  // The whole spec: every RPC of CSI 1.12, e.g. the Node service's eight.
  deepStrictEqual(paths(services.Node).length, 8);
});

Deno.test("the embedded schema encodes CreateVolumeRequest with CSI field numbers", () => {
  const method = loadCsiServices().Controller.service["CreateVolume"];
  if (method === undefined) throw new Error("no CreateVolume");
  const bytes = method.requestSerialize({
    name: "pvc-1",
    capacity_range: { required_bytes: "1073741824" },
    mutable_parameters: { iops: "5" },
  });
  // field 1 (name) = tag 0x0a, field 2 (capacity_range) = 0x12, field 8 (mutable_parameters) = 0x42
  deepStrictEqual([bytes[0], bytes[7]], [0x0a, 0x12]);
  deepStrictEqual(bytes.includes(0x42), true);
  deepStrictEqual(method.requestDeserialize(bytes).capacity_range.required_bytes, "1073741824");
});
