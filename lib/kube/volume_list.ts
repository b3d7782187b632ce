/**
 * Every PV of the cluster in one paged list, trimmed: for rare events (a
 * lost node's volumes), never a cache of every node's PVs.
 */
import type { Logger } from "../log/logger.ts";
import type { PersistentVolume } from "../model/objects.ts";
import { listAll } from "./informer/list_watch.ts";
import type { KubeRest } from "./rest/client.ts";
import { trimPersistentVolume } from "./trim.ts";

/** Lists them all; throws what the API server answered otherwise. */
export async function listPersistentVolumes(
  rest: KubeRest,
  logger: Logger,
  signal: AbortSignal,
): Promise<PersistentVolume[]> {
  const { objects } = await listAll({
    rest,
    options: {
      resource: "persistentvolumes",
      path: "/api/v1/persistentvolumes",
      trim: (raw) => trimPersistentVolume(raw, { keep: () => true }),
      resourceVersionOf: (pv) => pv.metadata.resourceVersion ?? "",
      logger,
      cutManagedFields: true,
    },
    onRetryAfter: () => {},
  }, signal);
  return [...objects.values()];
}
