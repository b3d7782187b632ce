/**
 * The orphan sweep of snapshot source-protection finalizers
 * (external-provisioner pkg/controller/snapshot_finalizer_controller.go):
 * every --snapshot-orphan-sweep-interval, a VolumeSnapshot that carries
 * `provisioner.storage.kubernetes.io/volumesnapshot-as-source-protection`
 * but that no Pending claim restores from loses it (a restore that failed
 * for good, a claim deleted meanwhile, an agent killed in between). As
 * upstream, the sweep first checks that it may list VolumeSnapshots and
 * stays off when it may not. Unlike upstream, it waits for the
 * VolumeSnapshot API when the CRDs are not installed yet, instead of never
 * starting, and removes a finalizer only when it was orphaned at the
 * previous sweep too (planSweep).
 */
import type { Logger } from "../log/logger.ts";
import { SNAPSHOT_SOURCE_PROTECTION_FINALIZER } from "../model/keys.ts";
import { sleep } from "../runtime/sleep.ts";
import { planSweep } from "./decide.ts";
import type { ClaimCache, SnapshotCache, SweepApi } from "./ports.ts";

/** The longest wait before the list permission is checked again after an error. */
const LIST_RETRY_MS = 60_000;

/** What the sweep is given. */
interface SnapshotSweepDeps {
  claims: ClaimCache;
  api: SweepApi;
  /** Creates (does not start) the informer of protected VolumeSnapshots. */
  openSnapshotCache: () => SnapshotCache;
  logger: Logger;
}

/** Runs the sweep every `intervalMs` until `signal` aborts. */
export class SnapshotSweep {
  readonly #deps: SnapshotSweepDeps;
  readonly #intervalMs: number;
  readonly #sleep: typeof sleep;
  #orphans = new Set<string>();

  /** `sleep` is the runtime's unless a test gives its own. */
  constructor(deps: SnapshotSweepDeps, options: { intervalMs: number; sleep?: typeof sleep }) {
    this.#deps = deps;
    this.#intervalMs = options.intervalMs;
    this.#sleep = options.sleep ?? sleep;
  }

  /** Waits for the API, checks the permission, then sweeps; resolves when stopped. */
  async run(signal: AbortSignal): Promise<void> {
    if (!(await this.#waitForApi(signal))) return;
    const { logger } = this.#deps;
    if (!(await this.#mayList(signal))) {
      logger.info("Snapshot orphan sweep disabled: no permission to list volumesnapshots");
      return;
    }
    const cache = this.#deps.openSnapshotCache();
    const running = cache.run(signal);
    try {
      while (!cache.hasSynced()) if (!(await this.#sleep(50, signal))) return;
      logger.info({ intervalMs: this.#intervalMs }, "Started the snapshot orphan sweep");
      do await this.sweep(cache, signal); while (await this.#sleep(this.#intervalMs, signal));
    } finally {
      await running;
    }
  }

  /** One sweep over the cached protected snapshots. */
  async sweep(cache: Pick<SnapshotCache, "list">, signal: AbortSignal): Promise<void> {
    const { remove, orphans } = planSweep(cache.list(), {
      claims: this.#deps.claims.list(),
      previousOrphans: this.#orphans,
    });
    this.#orphans = orphans;
    for (const snapshot of remove) {
      if (signal.aborted) return;
      const ref = { namespace: snapshot.metadata.namespace, name: snapshot.metadata.name };
      const key = `${ref.namespace}/${ref.name}`;
      try {
        const result = await this.#deps.api.changeSnapshotFinalizer(ref, {
          finalizer: SNAPSHOT_SOURCE_PROTECTION_FINALIZER,
          action: "remove",
          current: snapshot,
          // A conflict means it changed since the cache had it: judge it again next sweep.
          tries: 1,
        }, signal);
        // Removed, or another agent was first: no longer an orphan to remember.
        if (result === "changed" || result === "unchanged" || result === "gone") {
          this.#orphans.delete(key);
        }
        const message = result === "changed"
          ? "Removed an orphaned snapshot source-protection finalizer"
          : "Could not remove an orphaned snapshot source-protection finalizer; next sweep";
        this.#deps.logger.info({ snapshot: key, result }, message);
      } catch (error) {
        this.#deps.logger.warn(
          { snapshot: key, err: error },
          "Could not remove an orphaned snapshot source-protection finalizer; next sweep",
        );
      }
    }
  }

  /**
   * True once VolumeSnapshots are served; false when stopped first. Looks
   * once per sweep interval (default 5 min), not every minute: each look is
   * a discovery GET that kube-apiserver authenticates and authorizes anew,
   * and a fleet of 50 agents without the CRDs looking every minute cost
   * kube-apiserver up to twice the CPU at idle that upstream's did, which
   * never looks again (and never sweeps). The sweep cannot act sooner than
   * its interval anyway, and a restore that finds the API served
   * (SnapshotDiscovery) answers the next look without a request.
   */
  async #waitForApi(signal: AbortSignal): Promise<boolean> {
    while (!signal.aborted) {
      try {
        if (await this.#deps.api.snapshotsServed()) return true;
      } catch (error) {
        this.#deps.logger.debug({ err: error }, "Discovery of the VolumeSnapshot API failed");
      }
      if (!(await this.#sleep(this.#intervalMs, signal))) return false;
    }
    return false;
  }

  /** Upstream's preflight; an error other than Forbidden is retried. */
  async #mayList(signal: AbortSignal): Promise<boolean> {
    while (!signal.aborted) {
      try {
        return await this.#deps.api.mayListSnapshots(signal);
      } catch (error) {
        this.#deps.logger.warn({ err: error }, "Could not list volumesnapshots; trying again");
        if (!(await this.#sleep(Math.min(this.#intervalMs, LIST_RETRY_MS), signal))) return false;
      }
    }
    return false;
  }
}
