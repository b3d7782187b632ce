import { deepStrictEqual } from "node:assert/strict";
import { loadCsiServices } from "./proto.ts";

Deno.test("loadCsiServices() exposes the CSI methods the agent calls, with their full gRPC paths", () => {
  const services = loadCsiServices();
  const paths = (ctor: { service: Record<string, { path: string }> }) =>
    Object.values(ctor.service).map((method) => method.path).sort();
  deepStrictEqual(paths(services.Identity), [
    "/csi.v1.Identity/GetPluginCapabilities",
    "/csi.v1.Identity/GetPluginInfo",
    "/csi.v1.Identity/Probe",
  ]);
  deepStrictEqual(paths(services.Controller), [
    "/csi.v1.Controller/ControllerGetCapabilities",
    "/csi.v1.Controller/CreateVolume",
    "/csi.v1.Controller/DeleteVolume",
    "/csi.v1.Controller/GetCapacity",
  ]);
  deepStrictEqual(paths(services.Node), ["/csi.v1.Node/NodeGetInfo"]);
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
