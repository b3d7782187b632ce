import { deepStrictEqual } from "node:assert/strict";
import { goneSinceNotes, leaseNotes } from "./lease.ts";

Deno.test("goneSinceNotes: the watcher's note and flag, read back by leaseNotes; undefined removes both", () => {
  const notes = goneSinceNotes(Date.UTC(2026, 0, 1), 1_800_000);
  deepStrictEqual(notes, {
    "csi-node-provisioner.io/node-gone-since": "2026-01-01T00:00:00.000Z",
    "csi-node-provisioner.io/node-loss-release-after": "1800s",
  });
  deepStrictEqual(leaseNotes(notes as Record<string, string>), {
    releaseAfter: "1800s",
    nodeGoneSinceMs: Date.UTC(2026, 0, 1),
  });
  deepStrictEqual(Object.values(goneSinceNotes(undefined, 0)), [null, null]);
});
