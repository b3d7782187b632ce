/**
 * Parses a csi.proto text into a protobufjs JSON descriptor: what
 * `deno task proto:embed` writes into proto/csi_proto.ts, and what the tests
 * compare the embedded descriptor (and the old hand-written subset) with.
 */
import protobuf from "protobufjs";
import descriptorJson from "protobufjs/google/protobuf/descriptor.json" with { type: "json" };

/**
 * The google/protobuf files csi.proto imports. The CSI field options
 * (csi_secret, alpha_field, ...) extend descriptor.proto's option messages;
 * timestamp.proto types snapshot creation times; wrappers.proto types
 * ProbeResponse.ready. protobufjs carries the last two as "common" files.
 */
function importedDefinitions(): protobuf.INamespace[] {
  const common = ["google/protobuf/timestamp.proto", "google/protobuf/wrappers.proto"].map(
    (file) => {
      const nested = protobuf.common.get(file)?.nested;
      if (nested === undefined) throw new Error(`protobufjs does not carry ${file}`);
      return { nested };
    },
  );
  return [descriptorJson as protobuf.INamespace, ...common];
}

/** Parses a csi.proto text, with the files it imports, into a protobufjs JSON descriptor. */
export function describeCsiProto(text: string): protobuf.INamespace {
  const root = new protobuf.Root();
  for (const definition of importedDefinitions()) {
    if (definition.nested !== undefined) root.addJSON(definition.nested);
  }
  protobuf.parse(text, root, { keepCase: true });
  root.resolveAll();
  return root.toJSON();
}

/** The google/protobuf messages CSI messages carry on the wire. */
const WIRE_TYPES = new Set(["Timestamp", "Int64Value", "BoolValue"]);

/**
 * The part of a descriptor that encoding and decoding need: the csi package
 * without its option extensions (csi_secret, alpha_field, ... describe
 * fields, they are never sent) and, of google.protobuf, only the types CSI
 * messages contain. What `deno task proto:embed` compiles into
 * proto/csi_codecs.js; descriptor.proto's thirty option and descriptor
 * messages would only make the codecs bigger.
 */
export function wireDescriptor(descriptor: protobuf.INamespace): protobuf.INamespace {
  const copy = structuredClone(descriptor) as NamespaceTree;
  const google = copy.nested?.["google"]?.nested?.["protobuf"];
  if (google?.nested === undefined) throw new Error("descriptor without google.protobuf");
  for (const name of Object.keys(google.nested)) {
    if (!WIRE_TYPES.has(name)) delete google.nested[name];
  }
  const v1 = copy.nested?.["csi"]?.nested?.["v1"];
  if (v1?.nested === undefined) throw new Error("descriptor without csi.v1");
  for (const [name, value] of Object.entries(v1.nested)) {
    if ("extend" in value) delete v1.nested[name];
  }
  return copy;
}

interface NamespaceTree {
  nested?: Record<string, NamespaceTree & Record<string, unknown>>;
}
