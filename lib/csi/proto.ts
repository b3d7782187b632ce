/**
 * Loads the CSI schema from the text embedded in proto/csi_proto.ts into
 * gRPC service definitions, without touching the file system, so that the
 * same code works under Deno, Bun and inside the compiled binary.
 */
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import protobuf from "protobufjs";
import { CSI_PROTO } from "../../proto/csi_proto.ts";

/** The three CSI services, as grpc-js client constructors with their service definitions. */
export interface CsiServices {
  Identity: grpc.ServiceClientConstructor;
  Controller: grpc.ServiceClientConstructor;
  Node: grpc.ServiceClientConstructor;
}

/**
 * Decoding options shared by client and server: int64 as decimal strings
 * (converted to bigint at the edge), enums as their names, absent message
 * fields as null (so an absent ProbeResponse.ready is visible as such).
 */
const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
};

/** Builds the CSI gRPC services from the embedded schema. */
export function loadCsiServices(): CsiServices {
  const root = new protobuf.Root();
  const wrappers = protobuf.common.get("google/protobuf/wrappers.proto");
  if (wrappers?.nested === undefined) {
    throw new Error("protobufjs does not carry google/protobuf/wrappers.proto");
  }
  root.addJSON(wrappers.nested);
  protobuf.parse(CSI_PROTO, root, { keepCase: true });
  root.resolveAll();
  const definition = protoLoader.fromJSON(root.toJSON(), LOADER_OPTIONS);
  const loaded = grpc.loadPackageDefinition(definition);
  const v1 = (loaded["csi"] as grpc.GrpcObject | undefined)?.["v1"] as grpc.GrpcObject | undefined;
  const service = (name: string): grpc.ServiceClientConstructor => {
    const ctor = v1?.[name];
    if (typeof ctor !== "function") throw new Error(`CSI schema has no service csi.v1.${name}`);
    return ctor as grpc.ServiceClientConstructor;
  };
  return {
    Identity: service("Identity"),
    Controller: service("Controller"),
    Node: service("Node"),
  };
}
