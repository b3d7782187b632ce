/**
 * The CSI schema as gRPC service definitions. proto/csi.proto is upstream's
 * file as published; `deno task proto:embed` parses it once into a protobufjs
 * JSON descriptor (proto/csi_proto.ts), so that start-up loads that JSON
 * instead of parsing the proto text (faster, and the binary reads nothing
 * from disk). The same code works under Deno, Bun and in the compiled binary.
 */
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import type protobuf from "protobufjs";
import { CSI_DESCRIPTOR } from "../../proto/csi_proto.ts";

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

/** Builds the CSI gRPC services from the embedded descriptor (or another one, for tests). */
export function loadCsiServices(descriptor: protobuf.INamespace = CSI_DESCRIPTOR): CsiServices {
  const definition = protoLoader.fromJSON(descriptor, LOADER_OPTIONS);
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
