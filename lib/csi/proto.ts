/**
 * The CSI schema as gRPC service definitions. proto/csi.proto is upstream's
 * file as published; `deno task proto:embed` parses it once into a protobufjs
 * JSON descriptor (proto/csi_proto.ts), so that start-up neither reads a file
 * nor parses proto text. The same code works under Deno, Bun and in the
 * compiled binary.
 */
import * as grpc from "@grpc/grpc-js";
import protobuf from "protobufjs";
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
 * fields as null (so an absent ProbeResponse.ready is visible as such), and
 * the name of the set member of each oneof.
 */
const DECODING: protobuf.IConversionOptions = {
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
};

function serializer(type: protobuf.Type): (message: object) => Buffer {
  return (message) => {
    if (Array.isArray(message)) throw new Error(`cannot encode an array as ${type.name}`);
    return type.encode(type.fromObject(message)).finish() as Buffer;
  };
}

function deserializer(type: protobuf.Type): (bytes: Buffer) => Record<string, unknown> {
  return (bytes) => type.toObject(type.decode(bytes), DECODING);
}

/**
 * A grpc-js service definition: the same encoding and decoding calls as
 * @grpc/proto-loader makes (createSerializer, createDeserializer), without
 * the reflection descriptors it builds for every message, which nothing here
 * uses and which cost about 20 ms of start-up for the whole spec.
 */
function serviceDefinition(root: protobuf.Root, name: string): grpc.ServiceDefinition {
  const service = root.lookupService(`csi.v1.${name}`);
  const definition: Record<string, grpc.MethodDefinition<object, Record<string, unknown>>> = {};
  for (const method of service.methodsArray) {
    const request = method.resolvedRequestType;
    const response = method.resolvedResponseType;
    if (request === null || response === null) {
      throw new Error(`${name}.${method.name}: unresolved`);
    }
    definition[method.name] = {
      path: `/csi.v1.${name}/${method.name}`,
      requestStream: method.requestStream === true,
      responseStream: method.responseStream === true,
      requestSerialize: serializer(request),
      requestDeserialize: deserializer(request),
      responseSerialize: serializer(response),
      responseDeserialize: deserializer(response),
      originalName: method.name,
    };
  }
  return definition;
}

/** Builds the CSI gRPC services from the embedded descriptor (or another one, for tests). */
export function loadCsiServices(descriptor: protobuf.INamespace = CSI_DESCRIPTOR): CsiServices {
  const root = protobuf.Root.fromJSON(descriptor);
  root.resolveAll();
  const client = (name: string) =>
    grpc.makeGenericClientConstructor(serviceDefinition(root, name), `csi.v1.${name}`);
  return {
    Identity: client("Identity"),
    Controller: client("Controller"),
    Node: client("Node"),
  };
}
