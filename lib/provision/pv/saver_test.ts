/**
 * The PV saver's background retries: a PV whose first save failed for a
 * reason that may pass is saved later; one the API server then refuses has
 * its volume deleted and its claim put back on the claim queue; a failed
 * DeleteVolume is retried, and the intent stays until the volume is gone.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { eventually } from "../../../tests/fakes/async.ts";
import { capturing } from "../../../tests/fakes/logger.ts";
import { KEY, PV_NAME, reasons, world } from "../../../tests/fakes/provision_world.ts";

Deno.test("a PV queued after a failed save is saved in the background and its intent cleared", async () => {
  const { logger, lines } = capturing(0, "text");
  const w = world({ logger });
  w.failPvCreate(1);
  deepStrictEqual(await w.sync(), { kind: "done" });
  strictEqual(w.saver.holds(PV_NAME), true);
  const stop = new AbortController();
  const running = w.saver.run(stop.signal);
  await eventually(() => w.saver.pending === 0, "the PV saved");
  deepStrictEqual(w.record.savedPvs.map((pv) => pv.metadata.name), [PV_NAME]);
  deepStrictEqual(w.journal.log.at(-1), `clear ${PV_NAME} pv_saved`);
  // Both the warning and its resolution are written at the default verbosity.
  deepStrictEqual(lines.map((line) => /\] "([^"]+)"/.exec(line)?.[1]), [
    "Saving the PV failed; retrying in the background",
    "PV saved after retrying",
  ]);
  stop.abort();
  w.close();
  await running;
});

Deno.test("a PV refused in the background: volume deleted, Warning, the claim queued again", async () => {
  const w = world();
  w.failPvCreate(1);
  await w.sync();
  w.pvCreateAnswer({
    kind: "rejected",
    status: 422,
    reason: "Invalid",
    message: "metadata.annotations: Too long",
    fields: ["metadata.annotations"],
  });
  w.faults.deleteVolumeFails = 1;
  const stop = new AbortController();
  const running = w.saver.run(stop.signal);
  await eventually(() => w.saver.pending === 0, "the save given up and the volume deleted");
  deepStrictEqual(w.record.deleted.map((request) => request.volume_id), [`vol-${PV_NAME}`]);
  deepStrictEqual(w.retried, [KEY]);
  deepStrictEqual(reasons(w.record.events).at(-1), "Warning ProvisioningFailed");
  deepStrictEqual(w.journal.entries(), []);
  stop.abort();
  w.close();
  await running;
});

Deno.test("a PV held by the saver is not settled behind its back when its claim goes", async () => {
  const w = world();
  w.failPvCreate(1);
  await w.sync();
  w.deleteClaim();
  deepStrictEqual(await w.sync(), { kind: "done" });
  strictEqual(w.record.deleted.length, 0, "the saver owns the volume until it saves or gives up");
  strictEqual(w.journal.entries().length, 1);
  w.close();
});
