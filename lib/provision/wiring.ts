/**
 * The provisioning controller and the saver of its PVs, wired to each other:
 * the agent (start.ts) and the tests' worlds build them here, so that a
 * test runs the controller as the agent does.
 */
import type { WorkQueue } from "../queue/work/queue.ts";
import type { ProvisionControllerDeps, ProvisionControllerOptions } from "./context.ts";
import { ProvisionController } from "./controller.ts";
import { PvSaver } from "./pv/saver.ts";

/** The ports of provisioning, and the queue and clock of the PV saver. */
type ProvisioningPorts = Omit<ProvisionControllerDeps, "saver"> & {
  /** The saver's queue of PVs whose first save failed (upstream's "unsavedpvs"). */
  saveQueue: WorkQueue;
  /** Puts a claim back on the claim queue (its PV was refused in the background). */
  retryClaim: (key: string) => void;
  /** The saver's clock (tests); Date.now by default. */
  now?: () => number;
};

/** The controller and its PV saver, each logging under its own component. */
export function wireProvisioning(
  ports: ProvisioningPorts,
  options: ProvisionControllerOptions,
): { controller: ProvisionController; saver: PvSaver } {
  const { saveQueue, retryClaim, now, logger, ...deps } = ports;
  const saver = new PvSaver({
    api: deps.api,
    csi: deps.csi,
    journal: deps.journal,
    events: deps.events,
    logger: logger.child({ component: "pv-saver" }),
    queue: saveQueue,
    retryClaim,
    segment: options.persistentVolume.node.segment,
    ...(now === undefined ? {} : { now }),
  });
  const controller = new ProvisionController({
    ...deps,
    saver,
    logger: logger.child({ component: "provision" }),
  }, options);
  return { controller, saver };
}
