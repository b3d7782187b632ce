/**
 * Shared set-up for the test driver's own tests: a temporary directory, a
 * driver started in-process on a socket in it, and a CSI client.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { DriverOptions } from "./config.ts";
import { startTestDriver, type TestDriver } from "./driver.ts";
import { connectCsi, type CsiTestClient } from "./test_client.ts";

export interface DriverFixture {
  dir: string;
  driver: TestDriver;
  csi: CsiTestClient;
}

/** A fresh temporary directory, removed after fn. */
export async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "csi-driver-"));
  try {
    return await fn(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The options every test starts from: node-a with pools fast=10Gi and slow=1Gi. */
export function baseOptions(dir: string, extra: Partial<DriverOptions> = {}): DriverOptions {
  return {
    endpoint: `unix://${path.join(dir, "csi.sock")}`,
    nodeId: "node-a",
    pools: [{ kind: "fast", size: "10Gi" }, { kind: "slow", size: "1Gi" }],
    ...extra,
  };
}

/** Runs fn against a started driver, then stops it and closes the client, even on failure. */
export function withDriver(
  extra: Partial<DriverOptions> | ((dir: string) => Partial<DriverOptions>),
  fn: (fixture: DriverFixture) => Promise<void>,
): Promise<void> {
  return withTempDir(async (dir) => {
    const driver = await startTestDriver(
      baseOptions(dir, typeof extra === "function" ? extra(dir) : extra),
    );
    const csi = connectCsi(driver.endpoint);
    try {
      await fn({ dir, driver, csi });
    } finally {
      csi.close();
      await driver.stop();
    }
  });
}

/** A CreateVolume request as external-provisioner sends it. */
export function createRequest(
  name: string,
  options: { bytes?: number; kind?: string } = {},
): object {
  return {
    name,
    capacity_range: { required_bytes: String(options.bytes ?? 1024 * 1024), limit_bytes: "0" },
    volume_capabilities: [{
      mount: { fs_type: "ext4", mount_flags: [] },
      access_mode: { mode: "SINGLE_NODE_WRITER" },
    }],
    parameters: options.kind === undefined ? {} : { kind: options.kind },
    secrets: {},
  };
}
