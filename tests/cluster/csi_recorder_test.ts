/**
 * The recording proxy in front of a driver that records what it receives
 * itself (the test driver, for its call log and its faults): the driver gets
 * exactly the request the caller sent, the caller gets exactly the driver's
 * answer or error, and the proxy's record keeps secret values apart.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { spawnTestDriver } from "../csi_driver/spawn.ts";
import { callDriver } from "./csi_client.ts";
import { CsiRecorder } from "./csi_recorder.ts";

const REQUEST = {
  name: "pvc-1",
  capacity_range: { required_bytes: "1048576" },
  volume_capabilities: [{
    mount: { fs_type: "ext4" },
    access_mode: { mode: "SINGLE_NODE_WRITER" },
  }],
  parameters: { kind: "fast" },
  secrets: { password: "s3cr3t-value" },
};

Deno.test("the recording proxy passes calls through unchanged and records them", async () => {
  const dir = await Deno.makeTempDir({ prefix: "recorder-test-" });
  const driver = await spawnTestDriver({
    endpoint: `unix://${join(dir, "driver.sock")}`,
    controlEndpoint: `unix://${join(dir, "control.sock")}`,
    nodeId: "node-a",
    pools: [{ kind: "fast", size: "1Gi" }],
  });
  const recorder = await CsiRecorder.start({
    listen: join(dir, "csi.sock"),
    target: join(dir, "driver.sock"),
  });
  try {
    const call = (request: Record<string, unknown>) =>
      callDriver(recorder.listen, { service: "Controller", method: "CreateVolume", request });
    const answer = await call(REQUEST);
    const [seen] = await driver.control.calls("CreateVolume");
    const [recorded] = recorder.calls("CreateVolume");
    // The driver's record and the proxy's come from the same bytes.
    assert.deepEqual(recorded?.request, seen?.request);
    assert.deepEqual(recorded?.secretKeys, ["password"]);
    assert.doesNotMatch(JSON.stringify(recorded), /s3cr3t-value/);
    assert.deepEqual(recorder.secretsOf(recorded!), { password: "s3cr3t-value" });
    assert.deepEqual(recorded?.response, answer);
    assert.equal(recorded?.codeName, "OK");

    await driver.control.setFault({ method: "CreateVolume", code: "INTERNAL", message: "boom" });
    const error = await call({ ...REQUEST, name: "pvc-2" }).catch((e) => e);
    assert.equal(error.code, 13);
    assert.equal(error.details, "boom");
    assert.deepEqual(
      recorder.calls("CreateVolume").map((c) => [c.codeName, c.message]),
      [["OK", ""], ["INTERNAL", "boom"]],
    );
  } finally {
    recorder.close();
    await driver.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
