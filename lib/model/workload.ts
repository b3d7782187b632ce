/**
 * The Pod, Node and Event shapes `explain` reads (the agent itself never
 * reads them): plain data in the API's own JSON shape, cut down to the
 * fields an explanation uses.
 */
import type { Metadata } from "./objects.ts";

/** A container of a pod spec. */
export interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
}

/** A pod condition (Ready, PodScheduled, ...). */
interface PodCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

/** Pod (core/v1, trimmed). */
export interface Pod {
  metadata: Metadata & { namespace: string };
  spec: {
    nodeName?: string;
    containers: Container[];
    volumes?: { name: string; persistentVolumeClaim?: { claimName: string } }[];
  };
  status?: { phase?: string; conditions?: PodCondition[] };
}

/** Node (core/v1, trimmed to its name and labels). */
export interface Node {
  metadata: { name: string; labels?: Record<string, string> };
}

/** Event (core/v1), as both the core and the events.k8s.io writers leave it. */
export interface CoreEvent {
  metadata: { name: string; creationTimestamp?: string };
  involvedObject: { kind?: string; name?: string };
  type?: string;
  reason?: string;
  message?: string;
  source?: { component?: string; host?: string };
  reportingComponent?: string;
  firstTimestamp?: string | null;
  lastTimestamp?: string | null;
  eventTime?: string | null;
  count?: number;
  series?: { count?: number; lastObservedTime?: string };
}
