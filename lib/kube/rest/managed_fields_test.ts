import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { withoutManagedFields } from "./managed_fields.ts";

type Json = Record<string, unknown>;

const ENTRIES = [
  {
    manager: "kube-scheduler",
    operation: "Update",
    apiVersion: "v1",
    time: "2026-11-26T16:37:08Z",
    fieldsType: "FieldsV1",
    fieldsV1: {
      "f:metadata": { "f:annotations": { ".": {}, "f:volume.kubernetes.io/selected-node": {} } },
    },
  },
  {
    manager: "kube-controller-manager",
    operation: "Update",
    apiVersion: "v1",
    time: "2026-11-26T16:37:09Z",
    fieldsType: "FieldsV1",
    fieldsV1: { "f:status": { "f:capacity": { ".": {}, "f:storage": {} }, "f:phase": {} } },
    subresource: "status",
  },
];

function claim(name: string, extra: { managedFields?: unknown[]; annotations?: Json } = {}): Json {
  return {
    kind: "PersistentVolumeClaim",
    apiVersion: "v1",
    metadata: {
      name,
      namespace: "default",
      uid: `uid-${name}`,
      resourceVersion: "42",
      annotations: extra.annotations ?? { "volume.kubernetes.io/selected-node": "node-1" },
      finalizers: ["kubernetes.io/pvc-protection"],
      ...(extra.managedFields === undefined ? {} : { managedFields: extra.managedFields }),
    },
    spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Mi" } } },
    status: { phase: "Pending" },
  };
}

/** What parsing the cut text must give: the object as sent, without managedFields. */
function parsedWithout(json: string): unknown {
  return JSON.parse(json, (key, value) => key === "managedFields" ? undefined : value);
}

Deno.test("a watch event is parsed to the same object without its managedFields", () => {
  const line = JSON.stringify({
    type: "MODIFIED",
    object: claim("a", { managedFields: ENTRIES }),
  });
  const cut = withoutManagedFields(line);
  deepStrictEqual(JSON.parse(cut), parsedWithout(line));
  deepStrictEqual(cut.includes("managedFields"), false);
});

Deno.test("a list page loses the managedFields of every item", () => {
  const page = JSON.stringify({
    kind: "PersistentVolumeClaimList",
    apiVersion: "v1",
    metadata: { resourceVersion: "7" },
    items: ["a", "b", "c"].map((name) => claim(name, { managedFields: ENTRIES })),
  });
  const cut = withoutManagedFields(page);
  deepStrictEqual(JSON.parse(cut), parsedWithout(page));
  deepStrictEqual(cut.includes("managedFields"), false);
});

Deno.test("text that only looks like the end of the array inside an entry is not cut at", () => {
  const tricky = [
    { ...ENTRIES[0], manager: 'x}]},"spec":{"a":1}' },
    // A string that ends in the end's text: `}]},"` then `,` or `:` in the JSON.
    { ...ENTRIES[0], manager: "x}]}," },
    { ...ENTRIES[1], fieldsV1: { "f:a}]},": {} } },
    { ...ENTRIES[1], fieldsV1: { 'k:{"ports":[{"port":1}]},"spec"': {} } },
  ];
  const line = JSON.stringify({ type: "ADDED", object: claim("a", { managedFields: tricky }) });
  deepStrictEqual(JSON.parse(withoutManagedFields(line)), parsedWithout(line));
});

Deno.test("an annotation that contains the key's text is not taken for it", () => {
  const annotations = { note: ',"managedFields":[{"manager":"x"}]},"spec":{' };
  const line = JSON.stringify({
    type: "ADDED",
    object: claim("a", { annotations, managedFields: ENTRIES }),
  });
  const cut = withoutManagedFields(line);
  deepStrictEqual(JSON.parse(cut), parsedWithout(line));
  deepStrictEqual((JSON.parse(cut).object.metadata.annotations as Json).note, annotations.note);
});

Deno.test("an item whose metadata is its last field keeps its managedFields, and the items after it are still cut", () => {
  const bare = { metadata: { name: "only-metadata", managedFields: ENTRIES } };
  const page = JSON.stringify({
    items: [bare, claim("b", { managedFields: ENTRIES })],
  });
  const parsed = JSON.parse(withoutManagedFields(page));
  deepStrictEqual(parsed.items[0], bare);
  deepStrictEqual(
    parsed.items[1],
    parsedWithout(JSON.stringify(claim("b", { managedFields: ENTRIES }))),
  );
});

Deno.test("text without managedFields, or with an empty array, is returned as it is", () => {
  for (const managedFields of [undefined, []]) {
    const line = JSON.stringify({
      type: "ADDED",
      object: claim("a", managedFields && { managedFields }),
    });
    strictEqual(withoutManagedFields(line), line);
  }
  const bookmark = '{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}}';
  strictEqual(withoutManagedFields(bookmark), bookmark);
});
