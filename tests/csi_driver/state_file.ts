/**
 * Volumes kept across driver restarts in <state-dir>/volumes.json. Writes go
 * to a temporary file renamed over the old one, so a driver killed mid-write
 * leaves the previous state, never a torn file. Synchronous on purpose: a
 * CreateVolume answer is only sent once its volume is on disk.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import type { VolumeRecord } from "./types.ts";

export const STATE_FILE_NAME = "volumes.json";
const FORMAT_VERSION = 1;

interface StateFile {
  version: number;
  nodeId: string;
  volumes: VolumeRecord[];
}

export function stateFilePath(stateDir: string): string {
  return path.join(stateDir, STATE_FILE_NAME);
}

/** The saved volumes, or none when there is no state file yet. */
export function loadVolumes(stateDir: string): VolumeRecord[] {
  const file = stateFilePath(stateDir);
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error: unknown) {
    if ((error as { code?: string }).code === "ENOENT") return [];
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error: unknown) {
    throw new Error(
      `${file} is not JSON: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const state = parsed as Partial<StateFile> | null;
  if (state?.version !== FORMAT_VERSION || !Array.isArray(state.volumes)) {
    throw new Error(`${file} is not a version ${FORMAT_VERSION} state file`);
  }
  state.volumes.forEach((volume, index) => {
    if (!isVolumeRecord(volume)) throw new Error(`${file}: volume ${index} is malformed`);
  });
  return state.volumes;
}

/** Replaces the state file atomically. */
export function saveVolumes(
  stateDir: string,
  volumes: readonly VolumeRecord[],
  nodeId: string,
): void {
  fs.mkdirSync(stateDir, { recursive: true });
  const file = stateFilePath(stateDir);
  const temporary = `${file}.${process.pid}.tmp`;
  const state: StateFile = { version: FORMAT_VERSION, nodeId, volumes: [...volumes] };
  fs.writeFileSync(temporary, JSON.stringify(state, null, 2) + "\n");
  fs.renameSync(temporary, file);
}

function isVolumeRecord(value: unknown): value is VolumeRecord {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v["id"] === "string" && typeof v["name"] === "string" &&
    typeof v["kind"] === "string" && Number.isSafeInteger(v["sizeBytes"]) &&
    typeof v["parameters"] === "object" && v["parameters"] !== null &&
    typeof v["mutableParameters"] === "object" && v["mutableParameters"] !== null &&
    typeof v["createdAt"] === "string";
}
