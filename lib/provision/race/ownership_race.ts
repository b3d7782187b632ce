/**
 * The Immediate binding ownership race (upstream's becomeOwner in
 * pkg/controller/controller.go): a claim of an Immediate class that no node
 * has selected yet is raced for by every node agent. Each waits a jittered,
 * per-claim exponential delay, checks that the volume fits, and sets
 * `volume.kubernetes.io/selected-node` to its node with the claim's
 * resourceVersion as a precondition: the first write wins, the others get
 * 409 Conflict (and try again later, by when they usually see the winner).
 * The winner's informer then delivers the claim selected to it, and the
 * claim is provisioned as any selected claim.
 *
 * Scheduling: a race waits on a timer, not on a worker. Upstream blocks a
 * claim worker for the whole delay (so --worker-threads caps the races a
 * node runs at once); here a race holds a worker only for its turn (the
 * GetCapacity call and the patch): its timer puts the claim's key back on
 * the claim queue when the delay is over. Upstream polls the cache during
 * the delay to stop early; here the claim informer's change handler
 * (observe) ends the race the moment the claim is another node's, bound,
 * or deleted, and cancels a patch still waiting for the API budget.
 */
import { ANN_SELECTED_NODE } from "../../model/keys.ts";
import type { Claim, StorageClass } from "../../model/objects.ts";
import { type Clock, realClock } from "../../queue/clock.ts";
import { JitteredExponentialRateLimiter } from "../../queue/work/rate_limiters.ts";
import type { HandleOutcome } from "../../queue/work/workers.ts";
import type { RaceDeps, RaceOptions } from "./ports.ts";
import { Commitments } from "./commitments.ts";
import { mayRace } from "./may_race.ts";
import { RaceReporter } from "./report.ts";
import type { Race } from "./state.ts";
import type { SourceFacts } from "../source/checks.ts";
import { takeTurn, type Turn, unowned } from "./turn.ts";
import { readClaimSourceFacts } from "../source/load.ts";

const DONE: HandleOutcome = { kind: "done" };

/** The races of this node, by claim key. */
export class OwnershipRace {
  readonly #deps: RaceDeps;
  readonly #options: RaceOptions;
  readonly #clock: Clock;
  readonly #limiter: JitteredExponentialRateLimiter;
  readonly #reporter: RaceReporter;
  readonly #races = new Map<string, Race>();
  readonly #commitments: Commitments;

  constructor(deps: RaceDeps, options: RaceOptions) {
    this.#deps = deps;
    this.#options = options;
    this.#commitments = new Commitments(options.nodeName);
    this.#clock = deps.clock ?? realClock;
    this.#limiter = new JitteredExponentialRateLimiter(
      { baseMs: options.baseDelayMs, maxMs: options.maxDelayMs },
      deps.random === undefined ? {} : { random: deps.random },
    );
    this.#reporter = new RaceReporter(deps, options);
  }

  /** Claims this node is racing for (or watching). */
  get size(): number {
    return this.#races.size;
  }

  /**
   * The claim queue's handler for an Immediate claim with no node selected:
   * starts the race (arms the delay), or takes the turn the delay led to.
   * Always done as far as the queue is concerned: the race's own timer
   * brings the key back.
   */
  async consider(
    target: { key: string; claim: Claim; storageClass: StorageClass },
    signal: AbortSignal,
  ): Promise<HandleOutcome> {
    const { key, claim } = target;
    let race = this.#races.get(key);
    if (race !== undefined && race.uid !== claim.metadata.uid) {
      this.#end(race);
      race = undefined;
    }
    if (race === undefined) {
      const source = await this.#readSource(claim, signal);
      // The claim may have been taken, or the race started, while its source was read.
      if (this.#races.has(key) || !this.#stillUnowned(key, claim)) return DONE;
      if (!this.#mayTrack({ ...target, source })) return DONE;
      race = this.#start(key, { uid: claim.metadata.uid, source });
    }
    if (!race.due) {
      if (race.timer === undefined) this.#schedule(race, this.#firstDelay(race, target));
      return DONE;
    }
    race.due = false;
    race.turn = new AbortController();
    const turnSignal = AbortSignal.any([signal, race.turn.signal]);
    try {
      const turn = await takeTurn({ ...target, race }, this.#context(), turnSignal);
      if (this.#races.get(key) === race) this.#afterTurn(race, turn, target);
    } finally {
      race.turn = undefined;
    }
    return DONE;
  }

  /**
   * The claim informer's change handler: a race ends as soon as its claim is
   * gone, replaced, bound, being deleted or selected to any node (another
   * node won, or this one did), and the limiter forgets the claim, as
   * upstream's PVC delete handler and its "another node became owner" path do.
   */
  observe(change: { key: string; new?: Claim | undefined }): void {
    this.#commitments.observe(change);
    const race = this.#races.get(change.key);
    if (race === undefined) return;
    const claim = change.new;
    if (claim === undefined || claim.metadata.uid !== race.uid || !unowned(claim)) {
      // This node's own patch may be seen before its answer: let the turn finish and count it.
      const won = claim?.metadata.annotations?.[ANN_SELECTED_NODE] === this.#options.nodeName;
      this.#end(race, { abortTurn: !won });
    }
  }

  /**
   * This node owned the claim and its driver answered ResourceExhausted: the
   * claim goes back to the race (the caller removes selected-node). Counted
   * as a failure, so that this node's next delay for it is one step longer
   * than that of nodes that did not fail it.
   */
  released(uid: string): void {
    this.#limiter.when(uid);
  }

  /** CreateVolume created the claim's volume: the driver's capacity now counts it. */
  answered(key: string, uid: string): void {
    this.#commitments.answered(key, uid);
  }

  /** Cancels every timer and turn (shutdown). */
  close(): void {
    for (const race of [...this.#races.values()]) this.#end(race);
  }

  #start(key: string, facts: { uid: string; source: SourceFacts | undefined }): Race {
    const race: Race = {
      key,
      uid: facts.uid,
      since: this.#clock.now(),
      timer: undefined,
      due: false,
      turn: undefined,
      source: facts.source,
    };
    this.#races.set(key, race);
    this.#deps.metrics.racing(this.#races.size);
    return race;
  }

  /**
   * The facts about the claim's snapshot or clone source, once per race: a
   * read that fails leaves the source's node unknown, and every node races.
   */
  #readSource(claim: Claim, signal: AbortSignal): Promise<SourceFacts | undefined> {
    return readClaimSourceFacts(claim, this.#deps.sources, {
      crossNamespaceVolumeDataSource: this.#options.prepare.crossNamespaceVolumeDataSource,
      signal,
    });
  }

  #stillUnowned(key: string, claim: Claim): boolean {
    const latest = this.#deps.claims.get(key);
    return latest !== undefined && latest.metadata.uid === claim.metadata.uid && unowned(latest);
  }

  /**
   * A node outside the class's allowedTopologies, or that does not hold the
   * claim's source, never races for the claim; it keeps track of it only
   * when it may have to summarize it.
   */
  #mayTrack(
    target: {
      key: string;
      claim: Claim;
      storageClass: StorageClass;
      source?: SourceFacts | undefined;
    },
  ): boolean {
    const verdict = this.#verdict(target);
    if (verdict.ok || this.#reporter.summarizes) return true;
    this.#deps.logger.debug({ claim: target.key }, verdict.message);
    this.#deps.metrics.declined(verdict.reason);
    return false;
  }

  #verdict(target: { claim: Claim; storageClass: StorageClass; source?: SourceFacts | undefined }) {
    const node = { name: this.#options.nodeName, segment: this.#options.prepare.segment };
    return mayRace({ ...target, node }, this.#options.prepare);
  }

  /**
   * The first delay: upstream's, shortened by this node's published room for
   * the volume; for a node that may not race, the time of the first summary.
   */
  #firstDelay(race: Race, target: { claim: Claim; storageClass: StorageClass }): number {
    if (!this.#verdict({ ...target, source: race.source }).ok) {
      return this.#reporter.nextLookMs(race);
    }
    return this.#limiter.when(race.uid) *
      this.#reporter.delayFactor(this.#context(), race.key, target);
  }

  #context() {
    return {
      deps: this.#deps,
      options: this.#options,
      clock: this.#clock,
      commitments: this.#commitments,
    };
  }

  /** What follows a turn: the race is over, or the next turn after a delay. */
  #afterTurn(race: Race, turn: Turn, target: { claim: Claim; storageClass: StorageClass }): void {
    switch (turn.kind) {
      case "over":
        this.#end(race);
        return;
      case "again":
        this.#schedule(race, this.#limiter.when(race.uid));
        return;
      case "excluded":
        // Kept only when this agent may be the one that reports the claim.
        if (!this.#reporter.summarizes) {
          this.#end(race);
          return;
        }
        this.#reporter.afterDecline(race, { ...target, turn });
        this.#schedule(race, this.#reporter.nextLookMs(race));
        return;
      case "declined":
        this.#reporter.afterDecline(race, { ...target, turn });
        this.#schedule(race, this.#limiter.when(race.uid));
        return;
    }
  }

  #schedule(race: Race, delayMs: number): void {
    race.timer?.();
    race.timer = this.#clock.schedule(() => {
      race.timer = undefined;
      race.due = true;
      this.#deps.enqueue(race.key);
    }, delayMs);
  }

  #end(race: Race, options: { abortTurn: boolean } = { abortTurn: true }): void {
    race.timer?.();
    race.timer = undefined;
    if (options.abortTurn) race.turn?.abort();
    this.#limiter.forget(race.uid);
    this.#reporter.forget(race);
    if (this.#races.get(race.key) === race) this.#races.delete(race.key);
    this.#deps.metrics.racing(this.#races.size);
  }
}
