import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { parseConfig } from "../config/config.ts";
import type { DriverInfo } from "../csi/handshake.ts";
import { provisionControllerOptions, provisionerIdentity } from "./options.ts";
import { DRIVER, NODE, SEGMENT } from "../../tests/builders/provision.ts";

const driver: DriverInfo = {
  name: DRIVER,
  vendorVersion: "1",
  pluginCapabilities: new Set(["CONTROLLER_SERVICE", "VOLUME_ACCESSIBILITY_CONSTRAINTS"]),
  controllerCapabilities: new Set(["CREATE_DELETE_VOLUME", "GET_CAPACITY"]),
  nodeId: NODE,
  segment: SEGMENT,
};

Deno.test("provisionControllerOptions() passes the flags and the driver's topology to each decision", () => {
  const outcome = parseConfig(
    [
      "--node-deployment",
      "--strict-topology",
      "--volume-name-prefix=vol",
      "--volume-name-uuid-length=8",
      "--extra-create-metadata",
      "--default-fstype=xfs",
      "--timeout=20s",
    ],
    { NODE_NAME: NODE },
  );
  if (outcome.kind !== "run") throw new Error(outcome.kind);
  const options = provisionControllerOptions(outcome.config, driver, { identity: "id" });
  deepStrictEqual(options.decide, {
    driverName: DRIVER,
    nodeName: NODE,
    immediateBinding: true,
  });
  strictEqual(options.prepare.volumeNamePrefix, "vol");
  strictEqual(options.prepare.volumeNameUuidLength, 8);
  strictEqual(options.prepare.strictTopology, true);
  strictEqual(options.prepare.extraCreateMetadata, true);
  strictEqual(options.prepare.defaultFstype, "xfs");
  strictEqual(options.prepare.topologySupported, true);
  deepStrictEqual(options.prepare.segment, driver.segment);
  deepStrictEqual(options.prepare.capabilities.controller, [
    "CREATE_DELETE_VOLUME",
    "GET_CAPACITY",
  ]);
  strictEqual(options.persistentVolume.identity, "id");
  strictEqual(options.timeoutMs, 20_000);
});

Deno.test("provisionerIdentity() is <unix-ms>-<0..9999>-<driver>-<node> as upstream's node mode", () => {
  strictEqual(
    provisionerIdentity("d", { nodeName: "n", now: 1700000000000, random: 0.12345 }),
    "1700000000000-1234-d-n",
  );
});

Deno.test("provisionControllerOptions() passes --prevent-volume-mode-conversion to the restore checks", () => {
  for (const [flag, expected] of [["true", true], ["false", false]] as const) {
    const outcome = parseConfig(
      ["--node-deployment", `--prevent-volume-mode-conversion=${flag}`],
      { NODE_NAME: NODE },
    );
    if (outcome.kind !== "run") throw new Error(outcome.kind);
    const options = provisionControllerOptions(outcome.config, driver, { identity: "id" });
    strictEqual(options.prepare.preventVolumeModeConversion, expected);
  }
});
