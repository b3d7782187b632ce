import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { loadVolumes, saveVolumes, stateFilePath } from "./state_file.ts";
import type { VolumeRecord } from "./types.ts";

const volume: VolumeRecord = {
  id: "0d6c1f8e",
  name: "pvc-1",
  kind: "fast",
  sizeBytes: 1048576,
  parameters: { kind: "fast" },
  mutableParameters: {},
  createdAt: "2025-01-01T00:00:00.000Z",
};

function withDir(fn: (dir: string) => void): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "csi-state-"));
  try {
    fn(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

Deno.test("saved volumes load back unchanged and no temporary file is left", () => {
  withDir((dir) => {
    const stateDir = path.join(dir, "nested", "state");
    saveVolumes(stateDir, [volume], "node-a");
    deepStrictEqual(loadVolumes(stateDir), [volume]);
    saveVolumes(stateDir, [], "node-a");
    deepStrictEqual(loadVolumes(stateDir), []);
    deepStrictEqual(fs.readdirSync(stateDir), ["volumes.json"]);
  });
});

Deno.test("a missing state file means no volumes", () => {
  withDir((dir) => deepStrictEqual(loadVolumes(dir), []));
});

Deno.test("a corrupt or foreign state file stops the load with the file named", () => {
  withDir((dir) => {
    const file = stateFilePath(dir);
    fs.writeFileSync(file, "{not json");
    throws(() => loadVolumes(dir), new RegExp(`${file} is not JSON`));
    fs.writeFileSync(file, JSON.stringify({ version: 7, volumes: [] }));
    throws(() => loadVolumes(dir), /not a version 1 state file/);
    fs.writeFileSync(
      file,
      JSON.stringify({ version: 1, volumes: [{ ...volume, sizeBytes: "1" }] }),
    );
    throws(() => loadVolumes(dir), /volume 0 is malformed/);
    strictEqual(fs.existsSync(file), true, "a bad file is left for inspection");
  });
});
