import { strictEqual } from "node:assert/strict";
import { pinImageDigest } from "./manifests.ts";

const BASE = [
  "resources:",
  "  - daemonset.yaml",
  "images:",
  "  - name: other",
  "    newTag: 1.0.0",
  "  - name: csi-node-provisioner",
  "    newName: csi-node-provisioner",
  "    newTag: 0.1.0",
  "  - name: last",
  "    newTag: 2.0.0",
  "",
].join("\n");

Deno.test("the base's image entry gets the digest instead of its tag, and only that entry", () => {
  const pinned = pinImageDigest(BASE, "csi-node-provisioner", "sha256:abc")!;
  strictEqual(
    pinned,
    BASE.replace("    newTag: 0.1.0\n", "    digest: sha256:abc\n"),
  );
  strictEqual(
    pinImageDigest(pinned, "csi-node-provisioner", "sha256:def"),
    pinned.replace("abc", "def"),
  );
});

Deno.test("a base without the image is reported, not changed", () => {
  strictEqual(pinImageDigest(BASE, "missing", "sha256:abc"), undefined);
});
