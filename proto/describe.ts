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
