/**
 * The watch of the driver's Leases, run only while this agent is one of the
 * few that watch them (model/lease.ts LIVENESS_WATCHERS, chosen by
 * rendezvous hashing over the agents that publish capacity): every agent
 * watching every Lease would cost kube-apiserver one watch event per renewal
 * per agent, N² over the cluster. A watch started again lists afresh into a
 * new view. The other agents read only the watchers' Leases (probe.ts).
 */
import type { Logger } from "../log/logger.ts";
import type { LeaseInformer, LeaseLister } from "./ports.ts";
import { LeaseProbe } from "./probe.ts";
import { type AgentSighting, isAlive, LivenessView } from "./view.ts";

interface Running {
  informer: LeaseInformer;
  view: LivenessView;
  stop: AbortController;
}

/** Starts and stops the Lease informer as asked; its view while it runs. */
export class LeaseWatch {
  readonly #open: () => LeaseInformer;
  readonly #now: () => number;
  readonly #logger: Logger;
  readonly #shutdown: AbortSignal;
  readonly #probe: LeaseProbe;
  #running: Running | undefined;

  constructor(
    deps: { open: () => LeaseInformer; lister: LeaseLister; now: () => number; logger: Logger },
    shutdown: AbortSignal,
  ) {
    this.#open = deps.open;
    this.#probe = new LeaseProbe({ lister: deps.lister, now: deps.now });
    this.#now = deps.now;
    this.#logger = deps.logger;
    this.#shutdown = shutdown;
  }

  /** Runs the informer when `on`, stops it otherwise. */
  watch(on: boolean): void {
    if (on && this.#running === undefined && !this.#shutdown.aborted) this.#start();
    if (!on && this.#running !== undefined) this.#stop();
  }

  /** The agents seen; none while not watching. */
  agents(): AgentSighting[] {
    return this.#running?.view.agents() ?? [];
  }

  /** Whether the running informer has listed; false while not watching. */
  hasSynced(): boolean {
    return this.#running?.informer.hasSynced() ?? false;
  }

  /**
   * Of `publishers`, those known gone: while watching, every one without a
   * live Lease; else those the probes showed gone.
   */
  gone(publishers: readonly string[], nowMs: number): Set<string> {
    const running = this.#running;
    return new Set(publishers.filter((publisher) => {
      if (running === undefined) return this.#probe.gone(publisher, nowMs);
      const sighting = running.view.get(publisher);
      return sighting === undefined || !isAlive(sighting, nowMs);
    }));
  }

  /** While not watching: reads these agents' Leases (at most once per renewal period). */
  async probe(publishers: readonly string[], signal: AbortSignal): Promise<void> {
    if (this.#running !== undefined) return;
    if (await this.#probe.probe(publishers, signal)) {
      this.#logger.debug({ watchers: publishers.join(",") }, "Read the Lease watchers' Leases");
    }
  }

  #start(): void {
    this.#probe.reset();
    const informer = this.#open();
    const view = new LivenessView(this.#now);
    informer.onChange((change) => view.observe(change));
    const stop = new AbortController();
    const onShutdown = () => stop.abort();
    this.#shutdown.addEventListener("abort", onShutdown, { once: true });
    stop.signal.addEventListener(
      "abort",
      () => this.#shutdown.removeEventListener("abort", onShutdown),
      { once: true },
    );
    this.#running = { informer, view, stop };
    this.#logger.info("Watching the agents' Leases: this agent is one of their watchers");
    informer.run(stop.signal).catch((error) => {
      this.#logger.warn({ err: error }, "The Lease informer stopped");
    });
  }

  #stop(): void {
    this.#running?.stop.abort();
    this.#running = undefined;
    this.#logger.info("Not watching the agents' Leases: other agents are their watchers");
  }
}
