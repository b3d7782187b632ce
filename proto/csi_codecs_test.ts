/**
 * proto/csi_codecs.js (protobufjs-cli's static codecs) against protobufjs
 * reflection over the descriptor parsed from csi.proto: for every message
 * of the spec, an instance with every field set encodes to the same bytes
 * and decodes to the same object. Fails when csi_codecs.js is stale (run
 * `deno task proto:embed`).
 */
import { deepStrictEqual } from "node:assert/strict";
import protobuf from "protobufjs";
import { csi, google, type StaticCodec } from "./csi_codecs.js";
import { CSI_DESCRIPTOR } from "./csi_proto.ts";

const DECODING: protobuf.IConversionOptions = {
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
};

/** A value for every field (one member per oneof), int64 above 2^53 to catch precision loss. */
function sample(type: protobuf.Type, depth: number): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  const oneofTaken = new Set<string>();
  for (const field of type.fieldsArray) {
    const oneof = field.partOf?.name;
    if (oneof !== undefined && oneofTaken.has(oneof)) continue;
    const value = fieldValue(field, depth);
    if (value === undefined) continue;
    if (oneof !== undefined) oneofTaken.add(oneof);
    if (field.map) object[field.name] = { key: value };
    else object[field.name] = field.repeated ? [value, value] : value;
  }
  return object;
}

function fieldValue(field: protobuf.Field, depth: number): unknown {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Type) {
    return depth > 3 ? undefined : sample(resolved, depth + 1);
  }
  if (resolved instanceof protobuf.Enum) return Object.keys(resolved.values).at(-1);
  switch (field.type) {
    case "string":
      return `${field.name}-value`;
    case "bytes":
      return "AQID";
    case "bool":
      return true;
    case "double":
    case "float":
      return 1.5;
    case "int64":
    case "uint64":
    case "sint64":
    case "fixed64":
    case "sfixed64":
      return "9007199254740993";
    default:
      return 7;
  }
}

function messageTypes(namespace: protobuf.NamespaceBase): protobuf.Type[] {
  return namespace.nestedArray.flatMap((nested) => {
    if (nested instanceof protobuf.Type) return [nested, ...messageTypes(nested)];
    if (nested instanceof protobuf.Namespace) return messageTypes(nested);
    return [];
  });
}

/** The static codec of a reflection type, by its full name (csi.v1.X.Y or google.protobuf.X). */
function staticCodec(type: protobuf.Type): StaticCodec | undefined {
  const [first, second, ...rest] = type.fullName.replace(/^\./, "").split(".");
  const top = first === "csi" && second === "v1"
    ? csi.v1
    : first === "google" && second === "protobuf"
    ? google.protobuf
    : undefined;
  let codec: unknown = top;
  for (const part of rest) codec = (codec as Record<string, unknown> | undefined)?.[part];
  return codec as StaticCodec | undefined;
}

const root = protobuf.Root.fromJSON(CSI_DESCRIPTOR);
root.resolveAll();
const csiTypes = messageTypes(root.lookup("csi.v1") as protobuf.Namespace);

Deno.test("every CSI message has a static codec that encodes and decodes as reflection does", () => {
  // csi.proto v1.12.0 (pinned by sha256 in csi_proto_test.ts) defines 94, nested ones included.
  deepStrictEqual(csiTypes.length, 94);
  for (const type of csiTypes) {
    const codec = staticCodec(type);
    if (codec === undefined) throw new Error(`${type.fullName}: no static codec`);
    const object = sample(type, 0);
    const expected = type.encode(type.fromObject(object)).finish();
    const actual = codec.encode(codec.fromObject(object)).finish();
    deepStrictEqual([...actual], [...expected], `${type.fullName}: bytes`);
    deepStrictEqual(
      codec.toObject(codec.decode(expected), DECODING),
      type.toObject(type.decode(expected), DECODING),
      `${type.fullName}: decoded`,
    );
  }
});

Deno.test("the static codecs keep int64 values above 2^53 exact", () => {
  const codec = staticCodec(root.lookupType("csi.v1.CapacityRange"))!;
  const bytes = codec.encode(codec.fromObject({ required_bytes: "9007199254740993" })).finish();
  deepStrictEqual(
    codec.toObject(codec.decode(bytes), DECODING)["required_bytes"],
    "9007199254740993",
  );
});
