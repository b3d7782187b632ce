/**
 * Per-informer health as Prometheus series, read from the informers when
 * scraped (nothing is counted twice): whether its watch is open, how many
 * objects it holds, when it last listed and last heard from its watch, and
 * why it restarted.
 */
import { Counter, Gauge, type Registry } from "prom-client";
import { type InformerHealth, RESTART_REASONS } from "./health.ts";

/** Registers the informer families in `registry`; `informers` is read at each scrape. */
export function registerInformerMetrics(
  registry: Registry,
  informers: { all(): InformerHealth[] },
): void {
  const gauge = (
    name: string,
    help: string,
    value: (health: InformerHealth) => number | undefined,
  ) =>
    new Gauge({
      name,
      help,
      labelNames: ["resource"] as const,
      registers: [registry],
      collect(this: Gauge<"resource">) {
        this.reset();
        for (const health of informers.all()) {
          const read = value(health);
          if (read !== undefined) this.set({ resource: health.resource }, read);
        }
      },
    });
  gauge(
    "csi_node_provisioner_informer_up",
    "1 while the informer's watch stream is open, else 0 (listing, waiting to retry, or not started).",
    (health) => health.up ? 1 : 0,
  );
  gauge(
    "csi_node_provisioner_informer_objects",
    "Objects the informer's cache holds (after its filter: this node's, of this driver).",
    (health) => health.objects,
  );
  gauge(
    "csi_node_provisioner_informer_last_list_timestamp_seconds",
    "Unix time of the informer's last complete list.",
    (health) => seconds(health.lastListAt),
  );
  gauge(
    "csi_node_provisioner_informer_last_event_timestamp_seconds",
    "Unix time of the last event the informer's watch delivered, bookmarks included (kube-apiserver sends one about every minute): time() minus this above 90 s means a stalled watch.",
    (health) => seconds(health.lastEventAt),
  );
  new Counter({
    name: "csi_node_provisioner_informer_restarts_total",
    help:
      "Restarts of the informer's list and watch, by reason: error (a list or watch failed or broke), expired (410 Gone: relisted), idle_timeout (the watch sent nothing for --watch-idle-timeout: relisted), stream_end (the server ended the watch; normal every 5 to 10 minutes), relist (what the agent keeps of the resource changed: for claims, a StorageClass of the driver appeared).",
    labelNames: ["resource", "reason"] as const,
    registers: [registry],
    collect(this: Counter<"resource" | "reason">) {
      this.reset();
      for (const health of informers.all()) {
        for (const reason of RESTART_REASONS) {
          this.inc({ resource: health.resource, reason }, health.restarts[reason]);
        }
      }
    },
  });
}

function seconds(ms: number | undefined): number | undefined {
  return ms === undefined ? undefined : ms / 1000;
}
