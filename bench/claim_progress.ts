/**
 * Watches the benchmark's claims and their PVs, and notes the moment (and the
 * agent's CPU seconds at that moment) when every PV exists and when every
 * claim is Bound. Watches, not polling: the moments are those the events
 * arrive, not the next tick of a poll.
 */
import {
  type V1PersistentVolume,
  type V1PersistentVolumeClaim,
  Watch,
} from "@kubernetes/client-node";
import type { AdminClients } from "../tests/cluster/kubeconfig.ts";
import { cpuSeconds } from "./process_stats.ts";

/** When a milestone was reached. */
export interface Milestone {
  /** performance.now() when the event that completed it arrived. */
  at: number;
  /** What `sample` returned at that moment (the agent's CPU seconds; 0 without a sampler). */
  cpuSeconds: number;
}

export interface ClaimProgress {
  /** A PV exists for each of the `expected` claims (PVs whose claimRef is in the namespace). */
  allVolumes: Promise<Milestone>;
  /** Each of the `expected` claims is Bound. */
  allBound: Promise<Milestone>;
  /** How often a watch ended early and was started again (a late milestone is possible then). */
  restarts(): number;
  /** Of those, how often because it had delivered nothing for 30 s. */
  silentRestarts(): number;
  stop(): void;
}

class Counter {
  readonly #seen = new Set<string>();
  readonly #expected: number;
  readonly #sample: () => number;
  readonly done: Promise<Milestone>;
  #resolve: (milestone: Milestone) => void = () => {};
  reject: (error: Error) => void = () => {};
  #finished = false;

  constructor(expected: number, sample: () => number) {
    this.#expected = expected;
    this.#sample = sample;
    this.done = new Promise<Milestone>((resolve, reject) => {
      this.#resolve = resolve;
      this.reject = reject;
    });
    // A watch that ends early rejects; nobody may be awaiting yet.
    this.done.catch(() => {});
  }

  see(name: string): void {
    if (this.#finished) return;
    this.#seen.add(name);
    if (this.#seen.size < this.#expected) return;
    this.#finished = true;
    this.#resolve({ at: performance.now(), cpuSeconds: this.#sample() });
  }

  get finished(): boolean {
    return this.#finished;
  }
}

/**
 * Restarts after which a watch is given up: a watch that cannot start at all
 * fails the run instead of looping. A fleet run restarts its watches 10 to 20
 * times (kube-apiserver closes the ones that lag while 50 agents and the
 * benchmark share 2 cores).
 */
const MAX_RESTARTS = 100;

/** A watch that delivered nothing for this long, its counter not finished, is started again. */
const SILENT_RESTART_MS = 30_000;

/**
 * A watch that is started again whenever it ends before `counter` finished:
 * kube-apiserver closes a watch whose client falls behind (the benchmark
 * competes for the same cores), and a new watch replays every existing object
 * as ADDED, which the counter's set absorbs. It is also started again after
 * SILENT_RESTART_MS without an event: in a fleet run the benchmark's claim
 * watch once went silent without ending while every claim became Bound, and
 * the run waited out its 10 minutes (the agents' own watches, which end a
 * watch silent for 90 s, saw the same that run).
 */
class PersistentWatch<T> {
  readonly #watch: Watch;
  readonly #path: string;
  readonly #onEvent: (type: string, object: T) => void;
  readonly #counter: Counter;
  #controller: AbortController | undefined;
  #stopped = false;
  /** Which start is current: a start's end is ignored once another has begun. */
  #generation = 0;
  #lastEventAt = performance.now();
  #silenceTimer: ReturnType<typeof setInterval> | undefined;
  restarts = 0;
  /** Restarts after silence (counted in restarts too). */
  silentRestarts = 0;

  constructor(
    watch: Watch,
    options: { path: string; counter: Counter; onEvent: (type: string, object: T) => void },
  ) {
    this.#watch = watch;
    this.#path = options.path;
    this.#counter = options.counter;
    this.#onEvent = options.onEvent;
  }

  async start(): Promise<void> {
    this.#silenceTimer ??= setInterval(() => this.#checkSilence(), 5_000);
    const generation = ++this.#generation;
    this.#lastEventAt = performance.now();
    const onEvent = (type: string, object: unknown) => {
      this.#lastEventAt = performance.now();
      this.#onEvent(type, object as T);
    };
    this.#controller = await this.#watch.watch(this.#path, {}, onEvent, () => {
      if (generation !== this.#generation) return;
      this.#restart();
    });
  }

  stop(): void {
    this.#stopped = true;
    clearInterval(this.#silenceTimer);
    this.#controller?.abort();
  }

  #checkSilence(): void {
    if (this.#stopped || this.#counter.finished) return;
    if (performance.now() - this.#lastEventAt < SILENT_RESTART_MS) return;
    this.silentRestarts++;
    this.#generation++;
    this.#controller?.abort();
    this.#restart();
  }

  #restart(): void {
    if (this.#stopped || this.#counter.finished) return;
    this.restarts++;
    if (this.restarts > MAX_RESTARTS) {
      this.#counter.reject(new Error(`the watch on ${this.#path} keeps ending`));
      return;
    }
    this.start().catch((error) => this.#counter.reject(error as Error));
  }
}

/** Starts both watches; they are established when this resolves. */
export async function watchClaimProgress(
  admin: AdminClients,
  options: { namespace: string; expected: number; agentPid?: number; agentPids?: number[] },
): Promise<ClaimProgress> {
  const { namespace, expected } = options;
  // Several agents (one per node): their CPU seconds summed.
  const pids = options.agentPids ?? (options.agentPid === undefined ? [] : [options.agentPid]);
  const sample = () => pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
  const volumes = new Counter(expected, sample);
  const bound = new Counter(expected, sample);
  const watch = new Watch(admin.kubeConfig);
  const pvWatch = new PersistentWatch<V1PersistentVolume>(watch, {
    path: "/api/v1/persistentvolumes",
    counter: volumes,
    onEvent: (type: string, pv: V1PersistentVolume) => {
      if (type === "DELETED" || pv.spec?.claimRef?.namespace !== namespace) return;
      volumes.see(pv.metadata?.name ?? "");
    },
  });
  const claimWatch = new PersistentWatch<V1PersistentVolumeClaim>(watch, {
    path: `/api/v1/namespaces/${namespace}/persistentvolumeclaims`,
    counter: bound,
    onEvent: (type: string, claim: V1PersistentVolumeClaim) => {
      if (type !== "DELETED" && claim.status?.phase === "Bound") {
        bound.see(claim.metadata?.name ?? "");
      }
    },
  });
  await Promise.all([pvWatch.start(), claimWatch.start()]);
  return {
    allVolumes: volumes.done,
    allBound: bound.done,
    restarts: () => pvWatch.restarts + claimWatch.restarts,
    silentRestarts: () => pvWatch.silentRestarts + claimWatch.silentRestarts,
    stop: () => {
      pvWatch.stop();
      claimWatch.stop();
    },
  };
}
