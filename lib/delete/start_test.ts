/**
 * Start-up ordering of the delete path: its workers wait for every cache
 * they read, the VolumeAttachment cache included, so that the attach guard
 * never answers "not attached" from a cache that has not listed yet.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { Registry } from "prom-client";
import { parseConfig } from "../config/config.ts";
import type { DriverInfo } from "../csi/handshake.ts";
import type { DeleteVolumeRequest } from "../csi/types.ts";
import type { EventRecord } from "../model/events.ts";
import type { PersistentVolume } from "../model/objects.ts";
import { createWorkQueueMetrics } from "../queue/work/prometheus_metrics.ts";
import { Lifecycle } from "../runtime/lifecycle.ts";
import { startDeletion } from "./start.ts";
import { quiet } from "../../tests/fakes/logger.ts";
import { DRIVER, TOPOLOGY_KEY as KEY } from "../../tests/builders/provision.ts";
import { waitFor } from "../../tests/cluster/wait.ts";

const released: PersistentVolume = {
  metadata: {
    name: "pvc-1",
    uid: "pv-uid",
    finalizers: ["external-provisioner.volume.kubernetes.io/finalizer"],
  },
  spec: {
    csi: { driver: DRIVER, volumeHandle: "vol-1" },
    persistentVolumeReclaimPolicy: "Delete",
    storageClassName: "fast",
    nodeAffinity: {
      required: {
        nodeSelectorTerms: [{
          matchExpressions: [{ key: KEY, operator: "In", values: ["node-a"] }],
        }],
      },
    },
  },
  status: { phase: "Released" },
};

const driver: DriverInfo = {
  name: DRIVER,
  vendorVersion: "1",
  pluginCapabilities: new Set(["CONTROLLER_SERVICE"]),
  controllerCapabilities: new Set(["CREATE_DELETE_VOLUME", "PUBLISH_UNPUBLISH_VOLUME"]),
  nodeId: "node-a",
  segment: { [KEY]: "node-a" },
};

type Change = { key: string; old: PersistentVolume | undefined; new: PersistentVolume | undefined };

Deno.test("delete workers start only after the VolumeAttachment cache listed: an attached volume is never deleted", async () => {
  const outcome = parseConfig(["--node-deployment", "--csi-address=/csi.sock"], {
    NODE_NAME: "node-a",
  });
  if (outcome.kind !== "run") throw new Error(outcome.kind);
  let attachmentsListed = false;
  const deleted: DeleteVolumeRequest[] = [];
  const events: EventRecord[] = [];
  const pvHandlers: ((change: Change) => void)[] = [];
  const life = new Lifecycle(quiet);
  const start = startDeletion({
    config: outcome.config,
    driver,
    volumes: {
      get: (name) => (name === "pvc-1" ? released : undefined),
      onChange: (handler) => void pvHandlers.push(handler),
      hasSynced: () => true,
    },
    classes: { get: () => undefined, hasSynced: () => true },
    watchAttachments: () => ({
      // The VolumeAttachment exists; the cache only knows once it listed.
      attachedNode: () => (attachmentsListed ? "node-b" : undefined),
      informer: {
        onChange: () => {},
        run: (signal) =>
          new Promise((resolve) => signal.addEventListener("abort", () => resolve())),
        hasSynced: () => attachmentsListed,
      },
    }),
    api: {
      patchFinalizer: () => Promise.resolve("patched"),
      deletePersistentVolume: () => Promise.resolve("deleted"),
      readPersistentVolume: () => Promise.resolve(released),
      readSecretData: () => Promise.resolve({}),
    },
    csi: {
      deleteVolume: (request) => {
        deleted.push(request);
        return Promise.resolve();
      },
    },
    events: { record: (event) => void events.push(event) },
    registry: new Registry(),
    queues: createWorkQueueMetrics(new Registry()),
    logger: quiet,
  }, life);
  for (const handler of pvHandlers) handler({ key: "pvc-1", old: undefined, new: released });
  start();
  await new Promise((resolve) => setTimeout(resolve, 300));
  deepStrictEqual(deleted, [], "no worker ran before the VolumeAttachment cache listed");
  strictEqual(events.length, 0);
  attachmentsListed = true;
  await waitFor(() => events.length > 0, {
    description: "an Event",
    timeoutMs: 1000,
    intervalMs: 10,
  });
  deepStrictEqual(deleted, [], "DeleteVolume was never sent for the attached volume");
  strictEqual(events[0]?.message, "persistentvolume pvc-1 is still attached to node node-b");
  await life.close();
});
