/**
 * The agent's connection to its cluster: the credentials, the main REST
 * client (--kube-api-qps, --kube-api-burst), the calls outside the
 * informers, the informers provisioning and deletion read, and the Event
 * sender. main.ts opens it and hands its parts to the controllers as their
 * ports; nothing here starts a loop.
 */
import type { Config } from "../config/types.ts";
import type { Logger } from "../log/logger.ts";
import { SNAPSHOT_SOURCE_PROTECTION_FINALIZER } from "../model/keys.ts";
import type { PersistentVolume, VolumeSnapshot } from "../model/objects.ts";
import type { StorageCapacity } from "../model/storage_capacity.ts";
import { KubeApi } from "./api.ts";
import {
  type AttachmentCache,
  createAttachmentCache,
  createCapacityCache,
  createProvisioningCaches,
  createPublishedCapacityCache,
  type ProvisioningCaches,
  type PublishedCapacityCache,
} from "./caches.ts";
import { type TemplateKeys, UNKNOWN_CLASS_CLAIMS_LIMIT } from "./claim_scope.ts";
import { type KubeCredentials, loadCredentials } from "./rest/credentials.ts";
import type { BoundFactory } from "../queue/bounded_metrics.ts";
import { EventSender, MAX_PENDING, MAX_WRITTEN } from "./events.ts";
import type { Informer } from "./informer/informer.ts";
import { InformerHealthSet } from "./informer/health.ts";
import { createKubeRest, type KubeRest } from "./rest/client.ts";
import { createSnapshotFinalizerInformer } from "./snapshots.ts";
import {
  annotateLease,
  createLeaseCache,
  LeaseRenewals,
  listAgentLeases,
  type OwnLease,
} from "./leases.ts";
import { listPersistentVolumes } from "./volume_list.ts";
import type { AgentLease } from "../model/lease.ts";

/** What the controllers are built on. */
export interface KubeConnection {
  credentials: KubeCredentials;
  rest: KubeRest;
  api: KubeApi;
  informers: ProvisioningCaches;
  /** Every informer created here (and those main.ts adds): readiness and metrics read it. */
  informerHealth: InformerHealthSet;
  events: EventSender;
  /** Creates the VolumeAttachment informer of a driver (not started). */
  watchAttachments(driverName: string): AttachmentCache;
  /** Creates the informer of this node's CSIStorageCapacity objects (not started). */
  watchCapacity(options: { namespace: string; labelSelector: string; logger: Logger }): Informer<
    StorageCapacity
  >;
  /** Creates the informer of the Leases of a driver's agents in NAMESPACE (not started). */
  watchAgentLeases(driverName: string): Informer<AgentLease>;
  /** Reads a few agents' Leases of a driver. */
  agentLeases(driverName: string): {
    list(publishers: readonly string[], signal: AbortSignal): Promise<AgentLease[]>;
    /** Sets (a string) or removes (null) annotations of an agent's Lease (leases.ts annotateLease). */
    annotate(
      name: string,
      annotations: Record<string, string | null>,
      signal: AbortSignal,
    ): Promise<"updated" | "gone" | "conflict">;
  };
  /** Every PV of the cluster, one paged list (volume_list.ts). */
  listVolumes(signal: AbortSignal): Promise<PersistentVolume[]>;
  /** The renewals of this agent's own Lease. */
  ownLease(lease: Omit<OwnLease, "namespace">): LeaseRenewals;
  /** Creates the informer of every node's CSIStorageCapacity objects of a driver (not started). */
  watchPublishedCapacity(driverName: string): PublishedCapacityCache;
  /** Creates the informer of VolumeSnapshots with the source-protection finalizer (not started). */
  watchProtectedSnapshots(): Informer<VolumeSnapshot>;
}

/** Loads the credentials and creates the client, the informers and the Event sender. */
export async function connectKube(options: {
  config: Config;
  env: Record<string, string | undefined>;
  userAgent: string;
  /** Events' source.component. */
  component: string;
  /** The CSI driver's name: the claim cache keeps the claims of its classes. */
  driverName: string;
  /** The claim annotations a class's secret templates read: the claim cache keeps them. */
  templateKeys: TemplateKeys;
  /** Which PVs the PV informer keeps (this node's). */
  keepVolume: (pv: PersistentVolume) => boolean;
  /** The labels of the PVs this node's agent provisions. */
  volumeLabels: Record<string, string>;
  logger: Logger;
  /** Observers of the Event sender's bounded buffer and memory, and of the claims of unknown classes. */
  bounds?: BoundFactory;
}): Promise<KubeConnection> {
  const { config, logger } = options;
  const { kubeconfig, master } = config;
  const credentials = await loadCredentials({ kubeconfig, master, env: options.env });
  const rest = createKubeRest(credentials, {
    budget: { qps: config.kubeApiQps, burst: config.kubeApiBurst },
    userAgent: options.userAgent,
    logger: logger.child({ component: "kube" }),
  });
  const informerLogger = logger.child({ component: "informer" });
  const idleTimeoutMs = config.watchIdleTimeoutMs;
  const informers = createProvisioningCaches(rest, {
    nodeName: config.nodeName,
    driverName: options.driverName,
    templateKeys: options.templateKeys,
    keepVolume: options.keepVolume,
    volumeLabels: options.volumeLabels,
    logger: informerLogger,
    idleTimeoutMs,
    ...(options.bounds
      ? { unknownClassClaims: options.bounds("unknown_class_claims", UNKNOWN_CLASS_CLAIMS_LIMIT) }
      : {}),
  });
  const informerHealth = new InformerHealthSet();
  for (const informer of Object.values(informers)) informerHealth.add(informer);
  return {
    credentials,
    rest,
    api: new KubeApi(rest, { logger: logger.child({ component: "snapshots" }) }),
    informers,
    informerHealth,
    events: new EventSender(rest, {
      component: options.component,
      host: config.nodeName,
      logger: logger.child({ component: "events" }),
      ...(options.bounds
        ? {
          pendingObserver: options.bounds("event_buffer", MAX_PENDING),
          writtenObserver: options.bounds("event_history", MAX_WRITTEN),
        }
        : {}),
    }),
    watchAttachments: (driverName) => {
      const cache = createAttachmentCache(rest, {
        driverName,
        logger: informerLogger,
        idleTimeoutMs,
      });
      informerHealth.add(cache.informer);
      return cache;
    },
    watchCapacity: (options) => {
      const informer = createCapacityCache(rest, { ...options, idleTimeoutMs });
      informerHealth.add(informer);
      return informer;
    },
    // Not in informerHealth: it runs only on the few agents that watch the Leases, and
    // stops when another agent takes over; readiness must not wait for it.
    watchAgentLeases: (driverName) =>
      createLeaseCache(rest, {
        namespace: config.namespace,
        driverName,
        logger: informerLogger,
        idleTimeoutMs,
      }),
    agentLeases: (driverName) => ({
      list: (publishers, signal) =>
        listAgentLeases(rest, { namespace: config.namespace, driverName, publishers }, signal),
      annotate: (name, annotations, signal) =>
        annotateLease(rest, { namespace: config.namespace, name, annotations }, signal),
    }),
    listVolumes: (signal) => listPersistentVolumes(rest, informerLogger, signal),
    ownLease: (lease) => new LeaseRenewals(rest, { ...lease, namespace: config.namespace }),
    watchPublishedCapacity: (driverName) => {
      const cache = createPublishedCapacityCache(rest, {
        namespace: config.namespace,
        driverName,
        logger: informerLogger,
        idleTimeoutMs,
      });
      informerHealth.add(cache.informer);
      return cache;
    },
    // Not in informerHealth: it runs only while the snapshot CRDs are served
    // and the orphan sweep is on, and readiness must not wait for it.
    watchProtectedSnapshots: () =>
      createSnapshotFinalizerInformer(rest, {
        finalizer: SNAPSHOT_SOURCE_PROTECTION_FINALIZER,
        logger: informerLogger,
      }),
  };
}
