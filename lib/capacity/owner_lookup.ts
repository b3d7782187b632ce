/**
 * Finding the owner of the capacity objects at start-up:
 *
 * - `--capacity-ownerref-level` N ≥ 0 walks up from the Pod named POD_NAME,
 *   as upstream's pkg/owner: level 0 is the Pod, level 1 the Pod's
 *   controller taken from its reference without reading it (no RBAC needed
 *   for the parent), level ≥ 2 reads each parent in turn;
 * - `--capacity-owner-node` (this agent's addition) makes the Node the owner:
 *   the objects survive agent restarts and rollouts and are garbage-collected
 *   with the node. Before each create the Node is read again, so objects are
 *   not re-created for a node that was deleted (the garbage collector would
 *   only delete them again), and a re-registered Node's new UID is used.
 */
import type { ObjectIdentity, ObjectRef, OwnerReference } from "../model/objects.ts";
import type { Logger } from "../log/logger.ts";
import { controllerOf, controllerReference, describeOwner, nodeOwnerReference } from "./owner.ts";
import type { CapacityOwner, OwnerReads } from "./ports.ts";

/** Which owner the flags ask for. */
export type OwnerChoice =
  | { kind: "none" }
  | { kind: "node"; nodeName: string }
  | { kind: "pod"; namespace: string; podName: string; level: number };

/** Walks up from the Pod (upstream's owner.Lookup); throws with upstream's messages. */
export async function lookupPodOwner(
  reads: OwnerReads,
  start: { namespace: string; podName: string; level: number },
  signal?: AbortSignal,
): Promise<OwnerReference> {
  let ref: ObjectRef = {
    apiVersion: "v1",
    kind: "Pod",
    namespace: start.namespace,
    name: start.podName,
  };
  for (let levels = start.level;; levels--) {
    let identity: ObjectIdentity;
    try {
      identity = await reads.readObject(ref, signal);
    } catch (error) {
      throw new Error(`get object: ${(error as Error).message}`, { cause: error });
    }
    if (levels === 0) return controllerReference({ ...ref, uid: identity.uid });
    const controller = controllerOf(identity.ownerReferences);
    if (controller === undefined) {
      throw new Error(
        `${ref.apiVersion}/${ref.kind} ${JSON.stringify(ref.name)} in namespace ${
          JSON.stringify(ref.namespace)
        } has no controlling owner, cannot unwind the ownership further`,
      );
    }
    if (levels === 1) return controllerReference(controller);
    ref = {
      ...ref,
      apiVersion: controller.apiVersion,
      kind: controller.kind,
      name: controller.name,
    };
  }
}

/** An owner fixed for the life of the process (none, or found from the Pod). */
class FixedOwner implements CapacityOwner {
  readonly #owner: OwnerReference | undefined;

  constructor(owner: OwnerReference | undefined) {
    this.#owner = owner;
  }

  current(): OwnerReference | undefined {
    return this.#owner;
  }

  confirm(): Promise<"ok" | "gone"> {
    return Promise.resolve("ok");
  }
}

/** The Node as owner; its UID is read again before every create. */
class NodeOwner implements CapacityOwner {
  readonly #reads: OwnerReads;
  readonly #logger: Logger;
  #owner: OwnerReference;

  constructor(reads: OwnerReads, options: { node: { name: string; uid: string }; logger: Logger }) {
    this.#reads = reads;
    this.#logger = options.logger;
    this.#owner = nodeOwnerReference(options.node);
  }

  current(): OwnerReference {
    return this.#owner;
  }

  async confirm(signal: AbortSignal): Promise<"ok" | "gone"> {
    const uid = await this.#reads.readNodeUid(this.#owner.name, signal);
    if (uid === undefined) return "gone";
    if (uid !== this.#owner.uid) {
      this.#logger.notice(
        { node: this.#owner.name, oldUid: this.#owner.uid, uid },
        "The Node was re-created: owning CSIStorageCapacity objects by the new Node",
      );
      this.#owner = nodeOwnerReference({ name: this.#owner.name, uid });
    }
    return "ok";
  }
}

/** Resolves the flags' choice; throws an Error whose message is fit for a fatal exit. */
export async function resolveOwner(
  reads: OwnerReads,
  choice: OwnerChoice,
  options: { logger: Logger; signal?: AbortSignal },
): Promise<CapacityOwner> {
  const { logger, signal } = options;
  switch (choice.kind) {
    case "none":
      return new FixedOwner(undefined);
    case "node": {
      const uid = await reads.readNodeUid(choice.nodeName, signal);
      if (uid === undefined) {
        throw new Error(
          `--capacity-owner-node: Node ${JSON.stringify(choice.nodeName)} (NODE_NAME) not found`,
        );
      }
      const owner = new NodeOwner(reads, { node: { name: choice.nodeName, uid }, logger });
      logger.notice(
        `using ${describeOwner(owner.current())} as owner of CSIStorageCapacity objects`,
      );
      return owner;
    }
    case "pod": {
      let owner: OwnerReference;
      try {
        owner = await lookupPodOwner(reads, choice, signal);
      } catch (error) {
        throw new Error(`look up owner(s) of pod: ${(error as Error).message}`, { cause: error });
      }
      logger.notice(`using ${describeOwner(owner)} as owner of CSIStorageCapacity objects`);
      return new FixedOwner(owner);
    }
  }
}
