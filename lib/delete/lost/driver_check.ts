/**
 * The check of this node's volumes against its driver, once the informers
 * have synced, at every start: the volumes the driver no longer has are
 * reported (VolumeMissingOnDriver on the PV and its claim, and a gauge)
 * and, with --node-loss-release-after, handled as a lost node's volumes
 * (a claim deleted only where its class opts in). A volume the driver
 * lists is never touched. A driver offering neither ListVolumes nor
 * ControllerGetVolume is not checked (said once, at info).
 */
import type { ControllerCapabilityType, Segments } from "../../csi/types.ts";
import { CsiError } from "../../csi/status.ts";
import type { Logger } from "../../log/logger.ts";
import type { PersistentVolume } from "../../model/objects.ts";
import type { LostVolumeHandler } from "./act.ts";
import { missingCause, VOLUME_MISSING_ON_DRIVER } from "./events.ts";
import type { LostMetrics } from "./metrics.ts";
import { missingFrom, volumeCheck, volumesToCheck } from "./missing.ts";

/** gRPC NOT_FOUND. */
const NOT_FOUND = 5;

/** The driver's calls the check makes. */
export interface VolumeLookup {
  listVolumes(
    request: { max_entries: number; starting_token: string },
    signal: AbortSignal,
  ): Promise<{ entries: { volume: { volume_id: string } | null }[]; next_token: string }>;
  getVolume(request: { volume_id: string }, signal: AbortSignal): Promise<unknown>;
}

/** What the check is given. */
export interface DriverCheckDeps {
  csi: VolumeLookup;
  /** This node's PVs (the PV informer, synced). */
  volumes: { list(): PersistentVolume[] };
  handler: LostVolumeHandler;
  metrics: LostMetrics;
  logger: Logger;
}

/** Checks once; resolves to the PVs found missing (none when the driver cannot tell). */
export async function checkVolumesOnDriver(
  deps: DriverCheckDeps,
  driver: {
    name: string;
    segment: Segments | null;
    capabilities: ReadonlySet<ControllerCapabilityType>;
    releaseOn: boolean;
  },
  signal: AbortSignal,
): Promise<PersistentVolume[]> {
  const how = volumeCheck(driver.capabilities);
  if (how === "none") {
    deps.logger.info(
      "The CSI driver offers neither ListVolumes nor ControllerGetVolume: this node's volumes are not checked against it",
    );
    return [];
  }
  const pvs = volumesToCheck(deps.volumes.list(), driver.segment);
  const missing = how === "list"
    ? missingFrom(pvs, await listedHandles(deps.csi, signal))
    : await notFound(deps.csi, pvs, signal);
  deps.metrics.missingOnDriver(missing.length);
  deps.logger.info(
    { checked: pvs.length, missing: missing.length },
    "Checked this node's volumes against the CSI driver",
  );
  for (const pv of missing) {
    await deps.handler.handle([pv], missingCause(pv, driver.name), signal, {
      reason: VOLUME_MISSING_ON_DRIVER,
      release: driver.releaseOn,
    });
  }
  return missing;
}

/** Every volume ID ListVolumes returns, page after page. */
async function listedHandles(csi: VolumeLookup, signal: AbortSignal): Promise<Set<string>> {
  const handles = new Set<string>();
  let token = "";
  do {
    const page = await csi.listVolumes({ max_entries: 0, starting_token: token }, signal);
    for (const entry of page.entries) if (entry.volume) handles.add(entry.volume.volume_id);
    token = page.next_token;
  } while (token !== "" && !signal.aborted);
  return handles;
}

/** The PVs whose ControllerGetVolume answers NOT_FOUND. */
async function notFound(
  csi: VolumeLookup,
  pvs: readonly PersistentVolume[],
  signal: AbortSignal,
): Promise<PersistentVolume[]> {
  const missing: PersistentVolume[] = [];
  for (const pv of pvs) {
    try {
      await csi.getVolume({ volume_id: pv.spec.csi!.volumeHandle }, signal);
    } catch (error) {
      if (!(error instanceof CsiError) || error.code !== NOT_FOUND) throw error;
      missing.push(pv);
    }
  }
  return missing;
}
