/**
 * Helpers for tests that drive the cluster: namespaces, claims, pods that
 * consume them, and waits on their state. Pods on fake nodes never run (no
 * kubelet), so tests look at spec.nodeName and at claim and volume state.
 */

import {
  type V1CSIStorageCapacity,
  type V1PersistentVolume,
  type V1PersistentVolumeClaim,
  type V1Pod,
  Watch,
} from "@kubernetes/client-node";
import type { AdminClients } from "./kubeconfig.ts";
import { waitFor } from "./wait.ts";

/** Creates a namespace and waits for its `default` ServiceAccount, which pods need. */
export async function createNamespace(admin: AdminClients, name: string): Promise<void> {
  await admin.core.createNamespace({ body: { metadata: { name } } });
  await waitFor(
    () => admin.core.readNamespacedServiceAccount({ name: "default", namespace: name }),
    { description: `ServiceAccount ${name}/default`, timeoutMs: 30_000 },
  );
}

export function claimObject(
  name: string,
  options: { storageClass: string; size: string },
): V1PersistentVolumeClaim {
  return {
    metadata: { name },
    spec: {
      accessModes: ["ReadWriteOnce"],
      storageClassName: options.storageClass,
      resources: { requests: { storage: options.size } },
    },
  };
}

/**
 * A pod mounting the claim; its image is never pulled since no kubelet runs it.
 * `node` pins it through a nodeSelector, leaving the choice to the scheduler.
 */
export function podUsingClaim(name: string, claimName: string, node?: string): V1Pod {
  return {
    metadata: { name },
    spec: {
      ...(node ? { nodeSelector: { "kubernetes.io/hostname": node } } : {}),
      automountServiceAccountToken: false,
      containers: [{
        name: "app",
        image: "registry.k8s.io/pause:3.10",
        volumeMounts: [{ name: "data", mountPath: "/data" }],
      }],
      volumes: [{ name: "data", persistentVolumeClaim: { claimName } }],
    },
  };
}

/** Creates the claim and a pod using it: the usual WaitForFirstConsumer trigger. */
export async function createClaimAndPod(
  admin: AdminClients,
  namespace: string,
  options: { name: string; storageClass: string; size: string; node?: string },
): Promise<void> {
  await admin.core.createNamespacedPersistentVolumeClaim({
    namespace,
    body: claimObject(options.name, options),
  });
  await admin.core.createNamespacedPod({
    namespace,
    body: podUsingClaim(options.name, options.name, options.node),
  });
}

/** Deletes a pod at once: with no kubelet, a graceful delete would never finish. */
export async function forceDeletePod(
  admin: AdminClients,
  namespace: string,
  name: string,
): Promise<void> {
  await admin.core.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0 });
}

export async function waitForClaim(
  admin: AdminClients,
  ref: { namespace: string; name: string },
  condition: (claim: V1PersistentVolumeClaim) => boolean,
  options: { description: string; timeoutMs?: number },
): Promise<V1PersistentVolumeClaim> {
  return await waitFor(async () => {
    const claim = await admin.core.readNamespacedPersistentVolumeClaim(ref);
    return condition(claim) ? claim : undefined;
  }, {
    timeoutMs: 60_000,
    ...options,
    description: `${ref.namespace}/${ref.name}: ${options.description}`,
  });
}

/** The claims of a namespace. */
export async function claimsIn(
  admin: AdminClients,
  namespace: string,
): Promise<V1PersistentVolumeClaim[]> {
  return (await admin.core.listNamespacedPersistentVolumeClaim({ namespace })).items;
}

/** How many claims of the namespace are Bound. */
export async function boundIn(admin: AdminClients, namespace: string): Promise<number> {
  return (await claimsIn(admin, namespace)).filter((claim) => claim.status?.phase === "Bound")
    .length;
}

/**
 * Waits until `count` claims of the namespace are Bound (waitForClaimBound
 * waits for one claim by name); resolves to the milliseconds it waited.
 */
export async function waitClaimsBound(
  admin: AdminClients,
  namespace: string,
  options: { count: number; timeoutMs?: number },
): Promise<number> {
  const started = performance.now();
  await waitFor(async () => (await boundIn(admin, namespace)) >= options.count, {
    description: `${options.count} claims of ${namespace} Bound`,
    timeoutMs: options.timeoutMs ?? 60_000,
    intervalMs: 250,
  });
  return performance.now() - started;
}

/** Waits until the claim is Bound; resolves to the claim as it is then. */
export function waitForClaimBound(
  admin: AdminClients,
  ref: { namespace: string; name: string },
): Promise<V1PersistentVolumeClaim> {
  return waitForClaim(admin, ref, (claim) => claim.status?.phase === "Bound", {
    description: "claim Bound",
  });
}

/** Node names in a PV's required node affinity (`In` terms). */
export function affinityNodes(pv: V1PersistentVolume, topologyKey: string): string[] {
  const terms = pv.spec?.nodeAffinity?.required?.nodeSelectorTerms ?? [];
  return terms.flatMap((term) =>
    (term.matchExpressions ?? [])
      .filter((expression) => expression.key === topologyKey && expression.operator === "In")
      .flatMap((expression) => expression.values ?? [])
  );
}

/** The driver's CSIStorageCapacity objects in `namespace`, by node (single-key topology). */
export async function capacitiesByNode(
  admin: AdminClients,
  options: { namespace: string; topologyKey: string; storageClass: string },
): Promise<Map<string, V1CSIStorageCapacity>> {
  const list = await admin.storage.listNamespacedCSIStorageCapacity({
    namespace: options.namespace,
  });
  const byNode = new Map<string, V1CSIStorageCapacity>();
  for (const capacity of list.items) {
    const node = capacity.nodeTopology?.matchLabels?.[options.topologyKey];
    if (node && capacity.storageClassName === options.storageClass) byNode.set(node, capacity);
  }
  return byNode;
}

/** What a watch on one PersistentVolume saw. */
export interface VolumeHistory {
  /** status.phase of each event, in order (repeats collapsed). */
  phases: string[];
  /** Resolves when the PV is deleted. */
  deleted: Promise<void>;
  /** Ends the watch; call it in a finally. */
  stop(): void;
}

/**
 * Watches one PV from now on. A watch, not polling: a PV can pass through
 * Released in a few milliseconds when the provisioner deletes it promptly.
 */
export async function watchVolume(admin: AdminClients, name: string): Promise<VolumeHistory> {
  const phases: string[] = [];
  let markDeleted = () => {};
  const deleted = new Promise<void>((resolve) => (markDeleted = resolve));
  const controller = await new Watch(admin.kubeConfig).watch(
    "/api/v1/persistentvolumes",
    { fieldSelector: `metadata.name=${name}` },
    (type: string, pv: V1PersistentVolume) => {
      const phase = pv.status?.phase ?? "";
      if (phase && phases.at(-1) !== phase) phases.push(phase);
      if (type === "DELETED") markDeleted();
    },
    () => {},
  );
  return { phases, deleted, stop: () => controller.abort() };
}
