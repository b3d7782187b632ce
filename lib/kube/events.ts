/**
 * Kubernetes Events that never hold up the work that produced them. record()
 * only puts the event into a bounded buffer; a background sender writes it
 * with low priority on the shared API budget, so PV writes go first. Repeats
 * (same object, type, reason and message) are merged into one Event whose
 * count grows, as client-go's correlator does, both while waiting in the
 * buffer and after the Event was written. Messages are cut to
 * EVENT_MESSAGE_MAX_BYTES; the buffer (MAX_PENDING) and the memory of written
 * Events (MAX_WRITTEN) are bounded and report their sizes. A write that got
 * no answer (the API server away or restarting) is tried again as client-go's
 * recordToSink does; an answer is final.
 */
import { randomBytes } from "node:crypto";
import type { Logger } from "../log/logger.ts";
import { sleep } from "../runtime/sleep.ts";
import { capEventMessage, type EventRecord } from "../model/events.ts";
import { BoundedMap, type BoundObserver } from "../queue/bounded.ts";
import { hasStatus, KubeApiError, type KubeRest } from "./rest/client.ts";

interface Entry {
  event: EventRecord;
  count: number;
  firstTimestamp: string;
  lastTimestamp: string;
  /** Name of the Event object once written. */
  name?: string;
  /** The name its create uses, the same in every try (a create that did land answers 409). */
  createName?: string;
  /** The earlier Event this one repeats (its name is known once its write finished). */
  previous?: Entry;
  namespace: string;
}

/** Events of cluster-scoped objects live in "default", as client-go puts them. */
const CLUSTER_SCOPED_EVENT_NAMESPACE = "default";
/** A repeat older than this starts a new Event (client-go's correlator window). */
const MERGE_WINDOW_MS = 10 * 60 * 1000;
/** Events waiting to be written; past it a new event is dropped (and counted). */
export const MAX_PENDING = 4096;
/** Events written at once: a burst of claims makes two Events each. */
const SENDERS = 4;
/** client-go's maxTriesPerEvent (tools/record/event.go): writes of one Event that got no answer. */
export const MAX_TRIES_PER_EVENT = 12;
/** client-go's sleep between those tries; the first is a random part of it. */
const RETRY_SLEEP_MS = 10_000;
/** Written Events remembered for merging repeats; past it the oldest is forgotten. */
export const MAX_WRITTEN = 4096;

function correlationKey(event: EventRecord): string {
  const s = event.subject;
  return [s.kind, s.namespace ?? "", s.name, s.uid, event.type, event.reason, event.message].join(
    "\u0000",
  );
}

/** Options of the recorder. */
interface EventSenderOptions {
  /** source.component, e.g. "<driver>_<node>". */
  component: string;
  host: string;
  logger: Logger;
  /** Reports the buffer's size and each event dropped because it was full. */
  pendingObserver?: BoundObserver;
  /** Reports the size of the memory of written Events and its evictions. */
  writtenObserver?: BoundObserver;
  /** Bounds, for tests (default MAX_PENDING and MAX_WRITTEN). */
  maxPending?: number;
  maxWritten?: number;
  /** The clock, in ms since the epoch (default Date.now), for tests. */
  now?: () => number;
  /** The sleep between tries of a write that got no answer (default 10 s), for tests. */
  retrySleepMs?: number;
}

/** Buffers, merges and sends Events. run() sends until the signal aborts, then flushes briefly. */
export class EventSender {
  readonly #rest: KubeRest;
  readonly #options: EventSenderOptions;
  readonly #pending = new Map<string, Entry>();
  readonly #written: BoundedMap<string, Entry>;
  readonly #maxPending: number;
  readonly #wakers = new Set<() => void>();
  /** Keys whose Event is being written right now. */
  readonly #writing = new Set<string>();
  #namePrefix: string | undefined;
  #named = 0;

  constructor(rest: KubeRest, options: EventSenderOptions) {
    this.#rest = rest;
    this.#options = options;
    this.#maxPending = options.maxPending ?? MAX_PENDING;
    this.#written = new BoundedMap(options.maxWritten ?? MAX_WRITTEN, options.writtenObserver);
  }

  record(recorded: EventRecord): void {
    const event = { ...recorded, message: capEventMessage(recorded.message) };
    const key = correlationKey(event);
    const now = new Date(this.#now()).toISOString();
    const waiting = this.#pending.get(key);
    if (waiting !== undefined) {
      waiting.count++;
      waiting.lastTimestamp = now;
      return;
    }
    if (this.#pending.size >= this.#maxPending) {
      this.#options.pendingObserver?.evicted();
      this.#options.logger.warn(
        { reason: event.reason, object: event.subject.name },
        "Event buffer full, event dropped",
      );
      return;
    }
    const written = this.#written.get(key);
    const merge = written !== undefined &&
      this.#now() - Date.parse(written.lastTimestamp) < MERGE_WINDOW_MS;
    this.#pending.set(key, {
      event,
      count: merge ? written.count + 1 : 1,
      firstTimestamp: merge ? written.firstTimestamp : now,
      lastTimestamp: now,
      ...(merge ? { previous: written } : {}),
      namespace: event.subject.namespace || CLUSTER_SCOPED_EVENT_NAMESPACE,
    });
    this.#options.pendingObserver?.size(this.#pending.size);
    this.#wakeAll();
  }

  /** Number of events waiting to be written. */
  get pending(): number {
    return this.#pending.size;
  }

  /** Sends buffered events until `signal` aborts; then tries to flush for up to `flushMs`. */
  async run(signal: AbortSignal, options: { flushMs?: number } = {}): Promise<void> {
    const onAbort = () => this.#wakeAll();
    signal.addEventListener("abort", onAbort, { once: true });
    await Promise.all(Array.from({ length: SENDERS }, () => this.#send(signal)));
    signal.removeEventListener("abort", onAbort);
    const flush = new AbortController();
    const timer = setTimeout(() => flush.abort(), options.flushMs ?? 2000);
    await Promise.all(
      Array.from({ length: SENDERS }, () => this.#send(flush.signal, { untilEmpty: true })),
    );
    clearTimeout(timer);
  }

  async #send(signal: AbortSignal, options: { untilEmpty?: boolean } = {}): Promise<void> {
    while (!signal.aborted) {
      const next = this.#next();
      if (next === undefined) {
        if (options.untilEmpty && this.#pending.size === 0) return;
        await new Promise<void>((resolve) => this.#wakers.add(resolve));
        continue;
      }
      await this.#sendOne(next, signal);
      this.#wakeAll();
    }
  }

  /** The oldest pending event whose key is not being written (repeats wait for the write's name). */
  #next(): [string, Entry] | undefined {
    for (const pending of this.#pending) if (!this.#writing.has(pending[0])) return pending;
    return undefined;
  }

  #wakeAll(): void {
    for (const wake of this.#wakers) wake();
    this.#wakers.clear();
  }

  async #sendOne([key, entry]: [string, Entry], signal: AbortSignal): Promise<void> {
    this.#pending.delete(key);
    this.#options.pendingObserver?.size(this.#pending.size);
    this.#writing.add(key);
    // Remembered before the write, so that repeats recorded meanwhile patch this Event.
    this.#remember(key, entry);
    try {
      entry.name = await this.#writeTrying(entry, signal);
      // The name is known now: drop the link so that repeats never form a chain.
      delete entry.previous;
    } catch (error) {
      if (signal.aborted) {
        this.#requeueCutShort(key, entry);
        return;
      }
      this.#options.logger.warn(
        { err: error, reason: entry.event.reason },
        "Could not write event",
      );
      await sleep(1000, signal);
    } finally {
      this.#writing.delete(key);
    }
  }

  /**
   * An Event whose write the shutdown cut short (in flight, or waiting
   * between tries) goes back to the buffer, so that the flush after run()'s
   * signal tries it once more under the same name (a create that did land
   * answers 409). Unless a repeat is already waiting: that one carries the
   * count and is written in its place.
   */
  #requeueCutShort(key: string, entry: Entry): void {
    if (this.#pending.has(key)) return;
    this.#pending.set(key, entry);
    this.#options.pendingObserver?.size(this.#pending.size);
  }

  /**
   * Writes the Event, trying again while the write gets no answer, up to
   * MAX_TRIES_PER_EVENT tries RETRY_SLEEP_MS apart, the first sleep a random
   * part of it so that a fleet's agents do not all come back at once
   * (client-go's recordToSink). An answer of the API server ends it, as in
   * client-go's recordEvent: a refused Event is not sent again (429 and 5xx
   * with Retry-After were already followed by the REST client).
   */
  async #writeTrying(entry: Entry, signal: AbortSignal): Promise<string> {
    const sleepMs = this.#options.retrySleepMs ?? RETRY_SLEEP_MS;
    for (let tries = 1;; tries++) {
      try {
        return await this.#write(entry, signal);
      } catch (error) {
        if (error instanceof KubeApiError || tries >= MAX_TRIES_PER_EVENT) throw error;
        if (!(await sleep(tries === 1 ? sleepMs * Math.random() : sleepMs, signal))) throw error;
      }
    }
  }

  /**
   * Remembers a written Event for merging its repeats, and forgets those past
   * the merge window: record() would start a new Event for their repeats
   * anyway, so keeping them until the bound pushed them out only held memory
   * (two entries per claim, for hours at a steady trickle of claims).
   */
  #remember(key: string, entry: Entry): void {
    const cutoff = this.#now() - MERGE_WINDOW_MS;
    this.#written.dropOldestWhile((_, old) => Date.parse(old.lastTimestamp) < cutoff);
    this.#written.set(key, entry);
  }

  /**
   * Unique per Event of this process: a random prefix drawn once (so that a
   * restarted agent, or another node's, does not reuse names) and a count.
   * client-go names an Event `<object>.<UnixNano in hex>`; a count needs no
   * random bytes per Event.
   */
  #nameSuffix(): string {
    this.#namePrefix ??= randomBytes(6).toString("hex");
    return `${this.#namePrefix}${(++this.#named).toString(16)}`;
  }

  #now(): number {
    return this.#options.now?.() ?? Date.now();
  }

  async #write(entry: Entry, signal: AbortSignal): Promise<string> {
    const base = `/api/v1/namespaces/${entry.namespace}/events`;
    const existing = entry.previous?.name;
    if (existing !== undefined) {
      try {
        await this.#rest.request({
          method: "PATCH",
          path: `${base}/${existing}`,
          contentType: "application/strategic-merge-patch+json",
          body: {
            count: entry.count,
            lastTimestamp: entry.lastTimestamp,
            message: entry.event.message,
          },
          priority: "low",
          unread: true,
          signal,
        });
        return existing;
      } catch (error) {
        if (!hasStatus(error, 404)) throw error;
      }
    }
    const name = entry.createName ??= `${entry.event.subject.name}.${this.#nameSuffix()}`;
    try {
      await this.#rest.request({
        method: "POST",
        path: base,
        body: this.#eventObject(entry, name),
        priority: "low",
        unread: true,
        signal,
      });
    } catch (error) {
      // An earlier try that got no answer did create it.
      if (!hasStatus(error, 409)) throw error;
    }
    return name;
  }

  #eventObject(entry: Entry, name: string): Record<string, unknown> {
    const { subject, type, reason, message } = entry.event;
    return {
      metadata: { name, namespace: entry.namespace },
      involvedObject: {
        kind: subject.kind,
        apiVersion: subject.apiVersion ?? "v1",
        name: subject.name,
        uid: subject.uid,
        ...(subject.namespace === undefined ? {} : { namespace: subject.namespace }),
        ...(subject.resourceVersion === undefined
          ? {}
          : { resourceVersion: subject.resourceVersion }),
      },
      type,
      reason,
      message,
      count: entry.count,
      firstTimestamp: entry.firstTimestamp,
      lastTimestamp: entry.lastTimestamp,
      source: { component: this.#options.component, host: this.#options.host },
      reportingComponent: this.#options.component,
      reportingInstance: this.#options.host,
    };
  }
}
