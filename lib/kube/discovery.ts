/**
 * Discovery of the resources a group version serves, one request shared by
 * the checks that ask within a few seconds of each other: at start-up the
 * capacity publisher (csistoragecapacities) and the VolumeAttributesClass
 * check (volumeattributesclasses) both ask for storage.k8s.io/v1. Upstream's
 * agent asks once (kube-apiserver's audit log of a fleet run); asking twice
 * cost a fleet of 50 agents 50 more requests at start-up, each authenticated
 * and authorized anew, and counted in no apiserver_request_total series.
 */
import type { KubeRest } from "./rest/client.ts";
import { hasStatus } from "./rest/types.ts";

/**
 * How long an answer is reused: short, so that a CRD installed later is found
 * within seconds (SnapshotDiscovery asks through this while the VolumeSnapshot
 * API is not served, once per window however many restores ask); long enough
 * to cover one start-up.
 */
export const DISCOVERY_REUSE_MS = 10_000;

/** The discovery document's path of a group version ("v1" is the core group's). */
export function groupVersionPath(apiVersion: string): string {
  return apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
}

interface Answer {
  resources: ReadonlySet<string>;
  at: number;
}

/** The resources (plural names) of each group version, asked once per reuse window. */
export class Discovery {
  readonly #rest: KubeRest;
  readonly #now: () => number;
  readonly #answers = new Map<string, Answer>();
  readonly #pending = new Map<string, Promise<ReadonlySet<string>>>();

  constructor(rest: KubeRest, options: { now?: () => number } = {}) {
    this.#rest = rest;
    this.#now = options.now ?? (() => performance.now());
  }

  /** Whether `groupVersion` ("v1" for the core group) serves `resource`. */
  async serves(groupVersion: string, resource: string): Promise<boolean> {
    return (await this.#resources(groupVersion)).has(resource);
  }

  /**
   * The group version's resources; empty when it is not served (404). A
   * failure is thrown and not kept; askers at the same moment share one
   * request.
   */
  #resources(groupVersion: string): Promise<ReadonlySet<string>> {
    const kept = this.#answers.get(groupVersion);
    if (kept !== undefined && this.#now() - kept.at < DISCOVERY_REUSE_MS) {
      return Promise.resolve(kept.resources);
    }
    let pending = this.#pending.get(groupVersion);
    if (pending === undefined) {
      pending = this.#ask(groupVersion).finally(() => this.#pending.delete(groupVersion));
      this.#pending.set(groupVersion, pending);
    }
    return pending;
  }

  async #ask(groupVersion: string): Promise<ReadonlySet<string>> {
    let resources: ReadonlySet<string>;
    try {
      const list = await this.#rest.request<{ resources?: { name: string }[] }>({
        method: "GET",
        path: groupVersionPath(groupVersion),
      });
      resources = new Set((list.resources ?? []).map((candidate) => candidate.name));
    } catch (error) {
      if (!hasStatus(error, 404)) throw error;
      resources = new Set();
    }
    this.#answers.set(groupVersion, { resources, at: this.#now() });
    return resources;
  }
}
