/**
 * The CSI schema as gRPC service definitions. proto/csi.proto is upstream's
 * file as published; `deno task proto:embed` compiles it into protobufjs
 * static codecs (proto/csi_codecs.js) and a JSON descriptor
 * (proto/csi_proto.ts), of which only the plain service and method names
 * are read here. So start-up builds no protobufjs reflection types and
 * generates no code at run time (Root.fromJSON of the whole spec and the
 * codegen of each message's codec were a third of the agent's start-up
 * CPU); the same code works under Deno, Bun and in the compiled binary.
 */
import * as grpc from "@grpc/grpc-js";
import type protobuf from "protobufjs";
import { csi, type StaticCodec } from "../../proto/csi_codecs.js";
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

function serializer(name: string, codec: StaticCodec): (message: object) => Buffer {
  return (message) => {
    if (Array.isArray(message)) throw new Error(`cannot encode an array as ${name}`);
    const bytes = codec.encode(codec.fromObject(message as Record<string, unknown>)).finish();
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  };
}

function deserializer(codec: StaticCodec): (bytes: Buffer) => Record<string, unknown> {
  return (bytes) => codec.toObject(codec.decode(bytes), DECODING);
}

interface MethodDescriptor {
  requestType: string;
  responseType: string;
  requestStream?: boolean;
  responseStream?: boolean;
}

/** The csi.v1 namespace of the descriptor: plain JSON, read without building reflection types. */
function csiV1(): Record<string, { methods?: Record<string, MethodDescriptor> }> {
  const nested = (CSI_DESCRIPTOR.nested?.["csi"] as protobuf.INamespace | undefined)?.nested;
  const v1 = (nested?.["v1"] as protobuf.INamespace | undefined)?.nested;
  if (v1 === undefined) throw new Error("the CSI descriptor has no csi.v1");
  return v1 as Record<string, { methods?: Record<string, MethodDescriptor> }>;
}

function codecOf(type: string): StaticCodec {
  const codec = csi.v1[type];
  if (codec === undefined) throw new Error(`no codec for csi.v1.${type}`);
  return codec;
}

/**
 * A grpc-js service definition: the encoding and decoding calls
 * @grpc/proto-loader makes (createSerializer, createDeserializer), with the
 * static codecs, without proto-loader's per-message reflection descriptors.
 */
function serviceDefinition(name: string): grpc.ServiceDefinition {
  const methods = csiV1()[name]?.methods;
  if (methods === undefined) throw new Error(`the CSI descriptor has no service ${name}`);
  const definition: Record<string, grpc.MethodDefinition<object, Record<string, unknown>>> = {};
  for (const [method, { requestType, responseType, ...streams }] of Object.entries(methods)) {
    const request = codecOf(requestType);
    const response = codecOf(responseType);
    definition[method] = {
      path: `/csi.v1.${name}/${method}`,
      requestStream: streams.requestStream === true,
      responseStream: streams.responseStream === true,
      requestSerialize: serializer(requestType, request),
      requestDeserialize: deserializer(request),
      responseSerialize: serializer(responseType, response),
      responseDeserialize: deserializer(response),
      originalName: method,
    };
  }
  return definition;
}

/** Builds the CSI gRPC services from the static codecs. */
export function loadCsiServices(): CsiServices {
  const client = (name: string) =>
    grpc.makeGenericClientConstructor(serviceDefinition(name), `csi.v1.${name}`);
  return {
    Identity: client("Identity"),
    Controller: client("Controller"),
    Node: client("Node"),
  };
}
