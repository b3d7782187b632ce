/**
 * The start-up checks of the capacity publisher that talk to the API server:
 * the storage.k8s.io/v1 CSIStorageCapacity API must be served (Kubernetes
 * 1.24 and newer; upstream probes with an invalid create, §5.9, and falls
 * back to v1beta1, which this agent does not speak), and the owner of the
 * objects must be found. Failures end the process with a clear message.
 */
import { KubeApi } from "../kube/api.ts";
import type { KubeRest } from "../kube/rest.ts";
import type { Logger } from "../log/logger.ts";
import { FatalError } from "../runtime/fatal.ts";
import { CAPACITY_API_MISSING } from "./options.ts";
import { type OwnerChoice, type OwnerReads, resolveOwner } from "./owner_lookup.ts";
import type { CapacityOwner } from "./ports.ts";

/** Throws a FatalError when the API server lacks storage.k8s.io/v1 csistoragecapacities. */
export async function requireCapacityApi(rest: KubeRest): Promise<void> {
  if (!(await new KubeApi(rest).servesResource("storage.k8s.io/v1", "csistoragecapacities"))) {
    throw new FatalError(CAPACITY_API_MISSING);
  }
}

/** The owner the flags ask for, read through `rest`; a FatalError when it cannot be found. */
export async function findCapacityOwner(
  rest: KubeRest,
  choice: OwnerChoice,
  options: { logger: Logger; signal: AbortSignal },
): Promise<CapacityOwner> {
  const reads: OwnerReads = new KubeApi(rest);
  try {
    return await resolveOwner(reads, choice, options);
  } catch (error) {
    throw new FatalError((error as Error).message, { cause: error });
  }
}
