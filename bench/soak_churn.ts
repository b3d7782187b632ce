/**
 * The soak scenario's claim stream: every second one new claim per node
 * (selected to it, class test-fast with reclaimPolicy Delete), each deleted a
 * fixed time after it was first seen Bound, so that the node's agent
 * provisions and deletes volumes all the time. One stream serves every node,
 * so the agents under test see the same kind of churn at the same moments.
 *
 * Bound claims are found by listing the namespace once a second, not by a
 * watch: the namespace only ever holds the few claims alive, the list costs
 * the API server little, and a poll cannot miss an event or need restarts.
 */
import type { AdminClients } from "../tests/cluster/kubeconfig.ts";
import { delay, describeError } from "../tests/cluster/wait.ts";
import { selectedClaim } from "./workload.ts";

const SELECTED_NODE = "volume.kubernetes.io/selected-node";
const TICK_MS = 1_000;
/** Errors logged per kind; the counts carry the rest. */
const LOGGED_ERRORS = 5;

/** What happened to one node's claims. */
export interface ChurnCounts {
  created: number;
  /** Creates the API server refused or that failed. */
  createFailures: number;
  /** Claims seen Bound. */
  bound: number;
  /** Deletes the API server accepted (or that found the claim gone). */
  deleted: number;
}

export interface ClaimChurnOptions {
  namespace: string;
  nodes: readonly string[];
  /** How long a claim lives once seen Bound before it is deleted. */
  lifetimeMs: number;
  log: (line: string) => void;
}

/** `node-a-00042`: per node, in creation order. */
export function churnClaimName(node: string, index: number): string {
  return `${node}-${String(index).padStart(5, "0")}`;
}

export class ClaimChurn {
  readonly #admin: AdminClients;
  readonly #options: ClaimChurnOptions;
  readonly #counts = new Map<string, ChurnCounts>();
  /** performance.now() when each claim was first seen Bound. */
  readonly #boundAt = new Map<string, number>();
  readonly #deleting = new Set<string>();
  readonly #inFlight = new Set<Promise<void>>();
  #errorsLogged = 0;
  #polling = false;
  /** Claims in the namespace at the last poll, terminating ones included. */
  #live = Number.NaN;

  constructor(admin: AdminClients, options: ClaimChurnOptions) {
    this.#admin = admin;
    this.#options = options;
    for (const node of options.nodes) {
      this.#counts.set(node, { created: 0, createFailures: 0, bound: 0, deleted: 0 });
    }
  }

  counts(node: string): ChurnCounts {
    const counts = this.#counts.get(node);
    if (counts === undefined) throw new Error(`no claim stream for ${node}`);
    return { ...counts };
  }

  /**
   * One claim per node per second for `durationMs`, on an absolute schedule
   * (a slow create does not shift the next ones), deleting Bound claims meanwhile.
   */
  async stream(durationMs: number): Promise<void> {
    const start = performance.now();
    for (let tick = 0; tick * TICK_MS < durationMs; tick++) {
      const wait = start + tick * TICK_MS - performance.now();
      if (wait > 0) await delay(wait);
      for (const node of this.#options.nodes) this.#track(this.#create(node, tick));
      if (!this.#polling) this.#track(this.#poll());
    }
  }

  /**
   * Creates nothing more; keeps deleting until the namespace is empty or the
   * timeout. Returns the claims still in the namespace (0 when drained).
   */
  async drain(timeoutMs: number): Promise<number> {
    await Promise.allSettled([...this.#inFlight]);
    const deadline = performance.now() + timeoutMs;
    while (performance.now() < deadline) {
      await this.#poll();
      await Promise.allSettled([...this.#inFlight]);
      if (this.#live === 0) return 0;
      await delay(TICK_MS);
    }
    return this.#live;
  }

  #track(work: Promise<void>): void {
    this.#inFlight.add(work);
    void work.finally(() => this.#inFlight.delete(work));
  }

  #logError(what: string, error: unknown): void {
    if (this.#errorsLogged++ < LOGGED_ERRORS) {
      this.#options.log(`[soak] ${what}: ${describeError(error)}`);
    }
  }

  async #create(node: string, index: number): Promise<void> {
    const counts = this.#counts.get(node)!;
    try {
      await this.#admin.core.createNamespacedPersistentVolumeClaim({
        namespace: this.#options.namespace,
        body: selectedClaim(churnClaimName(node, index), { node }),
      });
      counts.created++;
    } catch (error) {
      counts.createFailures++;
      this.#logError(`creating ${churnClaimName(node, index)}`, error);
    }
  }

  async #poll(): Promise<void> {
    this.#polling = true;
    try {
      const list = await this.#admin.core.listNamespacedPersistentVolumeClaim({
        namespace: this.#options.namespace,
      });
      this.#live = list.items.length;
      const now = performance.now();
      for (const claim of list.items) {
        const name = claim.metadata?.name ?? "";
        const counts = this.#counts.get(claim.metadata?.annotations?.[SELECTED_NODE] ?? "");
        if (counts === undefined || claim.status?.phase !== "Bound") continue;
        if (!this.#boundAt.has(name)) {
          this.#boundAt.set(name, now);
          counts.bound++;
        }
        const due = (this.#boundAt.get(name) ?? now) + this.#options.lifetimeMs <= now;
        if (due && !this.#deleting.has(name)) this.#track(this.#delete(name, counts));
      }
    } catch (error) {
      this.#logError("listing the claims", error);
    } finally {
      this.#polling = false;
    }
  }

  async #delete(name: string, counts: ChurnCounts): Promise<void> {
    this.#deleting.add(name);
    try {
      await this.#admin.core.deleteNamespacedPersistentVolumeClaim({
        namespace: this.#options.namespace,
        name,
      });
      counts.deleted++;
    } catch (error) {
      if ((error as { code?: number }).code === 404) {
        counts.deleted++;
        return;
      }
      this.#deleting.delete(name); // the next poll tries again
      this.#logError(`deleting ${name}`, error);
    }
  }
}
