/**
 * Which containers a PodMonitor scrapes in a DaemonSet's pods, as Prometheus
 * Operator selects them: the pod's namespace by namespaceSelector (its own
 * namespace when there is none), the pod's labels by selector (empty selects
 * every pod), then each container port whose name is an endpoint's port.
 */

import type { K8sObject } from "../deploy/render.ts";

interface PodMonitorSpec {
  namespaceSelector?: { any?: boolean; matchNames?: string[] };
  selector: {
    matchLabels?: Record<string, string>;
    matchExpressions?: unknown[];
  };
  podMetricsEndpoints: { port: string }[];
}

interface PodTemplate {
  metadata?: { labels?: Record<string, string> };
  spec: { containers: { name: string; ports?: { name?: string }[] }[] };
}

/** The names of the containers whose ports `podMonitor` scrapes in `daemonSet`'s pods. */
export function scrapedContainers(podMonitor: K8sObject, daemonSet: K8sObject): string[] {
  const spec = podMonitor.spec as PodMonitorSpec;
  if (spec.selector.matchExpressions?.length) {
    throw new Error("matchExpressions are not read here: select with matchLabels");
  }
  if (!namespaceSelected(spec, podMonitor, daemonSet)) return [];
  const template = (daemonSet.spec as { template: PodTemplate }).template;
  const labels = template.metadata?.labels ?? {};
  const selected = Object.entries(spec.selector.matchLabels ?? {})
    .every(([key, value]) => labels[key] === value);
  if (!selected) return [];
  const ports = new Set(spec.podMetricsEndpoints.map((endpoint) => endpoint.port));
  return template.spec.containers
    .filter((container) => (container.ports ?? []).some((port) => ports.has(port.name ?? "")))
    .map((container) => container.name);
}

function namespaceSelected(
  spec: PodMonitorSpec,
  podMonitor: K8sObject,
  daemonSet: K8sObject,
): boolean {
  const namespace = daemonSet.metadata.namespace;
  if (spec.namespaceSelector?.any) return true;
  const names = spec.namespaceSelector?.matchNames ?? [podMonitor.metadata.namespace];
  return names.includes(namespace);
}
