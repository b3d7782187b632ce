/**
 * The publisher with the real work queue and worker pool and fakes of the
 * controller and informers: coalescing of refreshes, which informer events
 * become work, readiness, the poll, and shutdown.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import type { CacheChange } from "../../kube/informer/informer.ts";
import type { StorageClass } from "../../model/objects.ts";
import type { StorageCapacity } from "../../model/storage_capacity.ts";
import { eventually, flush, gate } from "../../../tests/fakes/async.ts";
import { WorkQueue } from "../../queue/work/queue.ts";
import type { HandleOutcome } from "../../queue/work/workers.ts";
import { WriteEchoes } from "./echoes.ts";
import { CapacityPublisher, type CapacitySyncer } from "./publisher.ts";
import { capacityObject } from "../../../tests/builders/capacity.ts";
import { DRIVER, namedClass } from "../../../tests/builders/provision.ts";
import { quiet } from "../../../tests/fakes/logger.ts";

class FakeCache<T> {
  handlers: ((change: CacheChange<T>) => void)[] = [];
  synced = true;
  onChange(handler: (change: CacheChange<T>) => void): void {
    this.handlers.push(handler);
  }
  hasSynced(): boolean {
    return this.synced;
  }
  emit(change: CacheChange<T>): void {
    for (const handler of this.handlers) handler(change);
  }
  run(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => signal.addEventListener("abort", () => resolve()));
  }
}

/** A controller that records its syncs; `hold` keeps a sync running until opened. */
class FakeSyncer implements CapacitySyncer {
  syncs: string[] = [];
  desired = ["fast", "slow"];
  hold: { promise: Promise<void> } | undefined;
  outcome: HandleOutcome = { kind: "done" };
  async sync(className: string): Promise<HandleOutcome> {
    this.syncs.push(className);
    await this.hold?.promise;
    return this.outcome;
  }
  desiredClasses(): string[] {
    return [...this.desired];
  }
  allKeys(): string[] {
    return [...this.desired, "leftover"];
  }
}

function setUp(options: { pollIntervalMs?: number } = {}) {
  const controller = new FakeSyncer();
  const classes = new FakeCache<StorageClass>();
  const objects = new FakeCache<StorageCapacity>();
  const echoes = new WriteEchoes();
  const readiness: (true | string)[] = [];
  const released: string[] = [];
  const queue = new WorkQueue();
  const publisher = new CapacityPublisher({
    controller,
    queue,
    classes,
    objects,
    echoes,
    ready: (state) => readiness.push(state),
    release: () => released.push("released"),
    logger: quiet,
  }, { driverName: DRIVER, workers: 1, pollIntervalMs: options.pollIntervalMs ?? 3_600_000 });
  return { controller, classes, objects, echoes, readiness, released, queue, publisher };
}

Deno.test("the first poll syncs every class once; readiness waits for the desired ones", async () => {
  const { controller, readiness, publisher } = setUp();
  const stop = new AbortController();
  const running = publisher.run(stop.signal);
  await eventually(() => controller.syncs.length === 3, "three syncs");
  deepStrictEqual(controller.syncs, ["fast", "slow", "leftover"]);
  deepStrictEqual(readiness, [
    "CSIStorageCapacity not yet published for fast, slow",
    "CSIStorageCapacity not yet published for slow",
    true,
  ]);
  stop.abort();
  await running;
});

Deno.test("100 refreshes while a class waits are one sync of it", async () => {
  const { controller, publisher } = setUp();
  const held = gate();
  controller.hold = held;
  const stop = new AbortController();
  const running = publisher.run(stop.signal);
  await eventually(() => controller.syncs.length === 1, "the first sync running");
  for (let i = 0; i < 100; i++) publisher.refreshAll();
  held.open();
  await eventually(() => controller.syncs.length === 4, "the queued syncs");
  await flush(10);
  // fast (held), then the poll's slow and leftover, then fast once for the 100 refreshes; each
  // refresh also asked for slow, which was still waiting in the queue: no second sync of it.
  deepStrictEqual(controller.syncs, ["fast", "slow", "leftover", "fast"]);
  stop.abort();
  await running;
});

Deno.test("informer events: the echo of our write is not work, someone else's change is", async () => {
  const { controller, objects, classes, echoes, publisher } = setUp();
  const stop = new AbortController();
  const running = publisher.run(stop.signal);
  await eventually(() => controller.syncs.length === 3, "the first poll");
  const object = capacityObject("csisc-a", { storageClassName: "fast" });
  echoes.expect("fast");
  objects.emit({ key: "ns/csisc-a", old: undefined, new: object });
  await flush(5);
  strictEqual(controller.syncs.length, 3, "our own write echoed");
  objects.emit({ key: "ns/csisc-a", old: object, new: undefined });
  await eventually(() => controller.syncs.length === 4, "a sync after a foreign delete");
  strictEqual(controller.syncs[3], "fast");
  classes.emit({ key: "other", old: undefined, new: namedClass("other", { provisioner: "x" }) });
  classes.emit({ key: "new", old: undefined, new: namedClass("new") });
  await eventually(() => controller.syncs.length === 5, "a sync of the new class");
  strictEqual(controller.syncs[4], "new");
  stop.abort();
  await running;
});

Deno.test("the poll repeats every interval; stop ends the workers and the poll, shuts the queue down, releases the parts", async () => {
  const { controller, publisher, queue, released } = setUp({ pollIntervalMs: 20 });
  controller.desired = ["fast"];
  const stop = new AbortController();
  const running = publisher.run(stop.signal);
  await eventually(() => controller.syncs.filter((c) => c === "fast").length >= 3, "three polls");
  deepStrictEqual(released, []);
  stop.abort();
  await running;
  ok(queue.isShuttingDown());
  deepStrictEqual(released, ["released"]);
});

Deno.test("nothing runs before both informers have synced", async () => {
  const { controller, objects, publisher } = setUp();
  objects.synced = false;
  const stop = new AbortController();
  const running = publisher.run(stop.signal);
  publisher.refreshAll();
  await new Promise((resolve) => setTimeout(resolve, 120));
  deepStrictEqual(controller.syncs, []);
  objects.synced = true;
  await eventually(() => controller.syncs.length > 0, "syncs after the informer synced");
  stop.abort();
  await running;
});
