/**
 * The controller shell with small in-memory fakes of its ports (unit tests
 * only): what it asks the driver, what it writes, what it tells the worker
 * pool, and that it waits for the informer to deliver its own writes.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { Registry } from "prom-client";
import { CsiError } from "../csi/status.ts";
import type { GetCapacityRequest, GetCapacityResponse } from "../csi/types.ts";
import type { OwnerReference, StorageClass } from "../model/objects.ts";
import type { StorageCapacity } from "../model/storage_capacity.ts";
import { CapacityController } from "./controller.ts";
import { countObjects } from "./plan/desired.ts";
import { WriteEchoes } from "./publish/echoes.ts";
import { ForeignWrites } from "./foreign_writes.ts";
import type { EventRecord } from "../model/events.ts";
import { createCapacityMetrics } from "./metrics.ts";
import type { CapacityClient, CapacityOwner, WriteBudget } from "./ports.ts";
import { capacityObject, GiB } from "../../tests/builders/capacity.ts";
import {
  DRIVER,
  LABELS,
  namedClass,
  SEGMENT,
  TOPOLOGY_KEY,
} from "../../tests/builders/provision.ts";
import { quiet } from "../../tests/fakes/logger.ts";

const never = new AbortController().signal;
const NODE_OWNER: OwnerReference = {
  apiVersion: "v1",
  kind: "Node",
  name: "node-a",
  uid: "node-uid",
  controller: true,
};

type Answer = GetCapacityResponse | CsiError;

function answer(bytes: bigint): GetCapacityResponse {
  return {
    available_capacity: String(bytes),
    maximum_volume_size: null,
    minimum_volume_size: null,
  };
}

/** A cluster of one node as the controller sees it; writes echo through the "informer". */
function world(
  options: {
    classes?: StorageClass[];
    objects?: StorageCapacity[];
    answers?: Answer[];
    owner?: CapacityOwner;
    budget?: WriteBudget;
    update?: "updated" | "conflict";
    echo?: boolean;
    now?: () => number;
    foreign?: ForeignWrites;
    events?: EventRecord[];
  } = {},
) {
  const classes = new Map(
    (options.classes ?? [namedClass("fast")]).map((c) => [c.metadata.name, c]),
  );
  const cache = new Map((options.objects ?? []).map((o) => [o.metadata.name, o]));
  const answers = [...(options.answers ?? [answer(10n * GiB)])];
  const echoes = new WriteEchoes();
  const record = { requests: [] as GetCapacityRequest[], writes: [] as string[] };
  let serial = 0;
  const deliver = (className: string, change: () => void) => {
    // The watch delivers the write a little later, as the API server's would.
    if (options.echo === false) return;
    setTimeout(() => {
      change();
      echoes.observe(className);
    }, 1);
  };
  const client: CapacityClient = {
    budget: options.budget ?? { take: () => Promise.resolve(true) },
    create: (object) => {
      const name = `csisc-${++serial}`;
      record.writes.push(`create ${name} ${object.capacity}`);
      deliver(object.storageClassName, () =>
        cache.set(name, {
          ...capacityObject(name, { storageClassName: object.storageClassName }),
          capacity: object.capacity,
          metadata: {
            ...capacityObject(name).metadata,
            ...(object.metadata.ownerReferences
              ? { ownerReferences: object.metadata.ownerReferences }
              : {}),
          },
        }));
      return Promise.resolve({ name });
    },
    update: (target) => {
      record.writes.push(
        `update ${target.name}@${target.resourceVersion} ${target.change.capacity}`,
      );
      if (options.update === "conflict") return Promise.resolve("conflict");
      const old = cache.get(target.name)!;
      deliver(old.storageClassName, () =>
        cache.set(target.name, {
          ...old,
          capacity: target.change.capacity,
          metadata: {
            ...old.metadata,
            resourceVersion: String(Number(old.metadata.resourceVersion) + 1),
          },
        }));
      return Promise.resolve("updated");
    },
    delete: (target) => {
      record.writes.push(`delete ${target.name}`);
      const old = cache.get(target.name);
      if (old === undefined) return Promise.resolve("gone");
      deliver(old.storageClassName, () => cache.delete(target.name));
      return Promise.resolve("deleted");
    },
  };
  const registry = new Registry();
  const scope = { desired: { driverName: DRIVER, immediateBinding: false }, segment: SEGMENT };
  const counts = () =>
    countObjects({ classes: [...classes.values()], objects: [...cache.values()] }, scope);
  const metrics = createCapacityMetrics(registry, counts);
  const owner = options.owner ?? { current: () => undefined, confirm: () => Promise.resolve("ok") };
  const controller = new CapacityController({
    classes: { get: (name) => classes.get(name), list: () => [...classes.values()] },
    objects: { list: () => [...cache.values()] },
    csi: {
      getCapacity: (request) => {
        record.requests.push(request);
        const next = answers.length > 1 ? answers.shift()! : answers[0]!;
        return next instanceof CsiError ? Promise.reject(next) : Promise.resolve(next);
      },
    },
    client,
    owner,
    echoes,
    metrics,
    logger: quiet,
    now: options.now ?? (() => 1_700_000_000_000),
    ...(options.foreign ? { foreign: options.foreign } : {}),
    ...(options.events ? { events: { record: (event) => options.events?.push(event) } } : {}),
  }, { ...scope, labels: LABELS, echoTimeoutMs: 200 });
  return { controller, cache, classes, record, registry, echoes, counts };
}

async function metric(registry: Registry, name: string): Promise<string> {
  const text = await registry.metrics();
  return text.split("\n").filter((line) => line.startsWith(name)).join("\n");
}

Deno.test("first sync: GetCapacity with the class parameters and segment, then one create", async () => {
  const { controller, record, cache, registry } = world({
    classes: [namedClass("fast", {
      parameters: { kind: "fast", "csi.storage.k8s.io/provisioner-secret-name": "s" },
    })],
    owner: { current: () => NODE_OWNER, confirm: () => Promise.resolve("ok") },
  });
  deepStrictEqual(await controller.sync("fast", never), { kind: "done" });
  deepStrictEqual(record.requests, [{
    volume_capabilities: [],
    parameters: { kind: "fast" },
    accessible_topology: { segments: { [TOPOLOGY_KEY]: "node-a" } },
  }]);
  deepStrictEqual(record.writes, ["create csisc-1 10Gi"]);
  // The worker returned only after the informer delivered the new object.
  deepStrictEqual(cache.get("csisc-1")?.metadata.ownerReferences, [NODE_OWNER]);
  strictEqual(
    await metric(registry, "csistoragecapacities_writes_total"),
    'csistoragecapacities_writes_total{storageclass="fast",operation="create"} 1',
  );
  strictEqual(
    await metric(registry, "csistoragecapacities_last_publish_timestamp_seconds"),
    'csistoragecapacities_last_publish_timestamp_seconds{storageclass="fast"} 1700000000',
  );
});

Deno.test("nothing changed: no write at all, but the class counts as published", async () => {
  const { controller, record, registry } = world({ objects: [capacityObject("csisc-a")] });
  deepStrictEqual(await controller.sync("fast", never), { kind: "done" });
  deepStrictEqual(record.writes, []);
  ok((await metric(registry, "csistoragecapacities_last_publish_timestamp_seconds")).endsWith(
    " 1700000000",
  ));
});

Deno.test("capacity changed: one update with the cached resourceVersion; the next sync starts from it", async () => {
  const { controller, record, cache } = world({
    objects: [capacityObject("csisc-a", { resourceVersion: "7" })],
    answers: [answer(9n * GiB), answer(8n * GiB)],
  });
  await controller.sync("fast", never);
  strictEqual(cache.get("csisc-a")?.metadata.resourceVersion, "8");
  await controller.sync("fast", never);
  deepStrictEqual(record.writes, ["update csisc-a@7 9Gi", "update csisc-a@8 8Gi"]);
});

Deno.test("GetCapacity fails: retry with backoff, an error counted, nothing written", async () => {
  const { controller, record, registry } = world({
    answers: [new CsiError("GetCapacity", 14, "driver down")],
  });
  const outcome = await controller.sync("fast", never);
  strictEqual(outcome.kind, "retry");
  deepStrictEqual(record.writes, []);
  strictEqual(
    await metric(registry, "csistoragecapacities_getcapacity_errors_total"),
    'csistoragecapacities_getcapacity_errors_total{storageclass="fast"} 1',
  );
});

Deno.test("class deleted: its objects go, without asking the driver", async () => {
  const { controller, record, classes, cache } = world({
    objects: [capacityObject("csisc-a"), capacityObject("csisc-b", { storageClassName: "slow" })],
  });
  classes.delete("fast");
  deepStrictEqual(await controller.sync("fast", never), { kind: "done" });
  deepStrictEqual(record.requests, []);
  deepStrictEqual(record.writes, ["delete csisc-a"]);
  deepStrictEqual([...cache.keys()], ["csisc-b"]);
});

Deno.test("Immediate classes get no object unless asked", async () => {
  const { controller, record } = world({
    classes: [namedClass("now", { volumeBindingMode: "Immediate" })],
  });
  await controller.sync("now", never);
  deepStrictEqual(record.writes, []);
  deepStrictEqual(controller.desiredClasses(), []);
});

Deno.test("a conflict is retried (the informer's event brings the new resourceVersion)", async () => {
  const { controller, record, echoes } = world({
    objects: [capacityObject("csisc-a")],
    answers: [answer(1n * GiB)],
    update: "conflict",
  });
  strictEqual((await controller.sync("fast", never)).kind, "retry");
  deepStrictEqual(record.writes, ["update csisc-a@10 1Gi"]);
  strictEqual(echoes.outstanding("fast"), 0);
});

Deno.test("the Node owner is gone: nothing is created, retried later", async () => {
  const { controller, record } = world({
    owner: { current: () => NODE_OWNER, confirm: () => Promise.resolve("gone") },
  });
  strictEqual((await controller.sync("fast", never)).kind, "retry");
  deepStrictEqual(record.writes, []);
});

Deno.test("a write the informer never delivers does not block the worker for ever", async () => {
  const { controller, record } = world({ echo: false });
  const started = performance.now();
  deepStrictEqual(await controller.sync("fast", never), { kind: "done" });
  ok(performance.now() - started >= 150, "waited for the echo");
  deepStrictEqual(record.writes, ["create csisc-1 10Gi"]);
});

Deno.test("goal, current and obsolete count as upstream's gauges", async () => {
  const { controller, registry, counts } = world({
    classes: [namedClass("fast"), namedClass("slow")],
    objects: [
      capacityObject("csisc-a"),
      capacityObject("csisc-stale", { segment: { [TOPOLOGY_KEY]: "old" } }),
      capacityObject("csisc-gone-class", { storageClassName: "deleted" }),
    ],
  });
  strictEqual(counts().goal, 2);
  strictEqual(counts().current, 1);
  strictEqual(counts().obsolete, 2);
  deepStrictEqual(controller.allKeys().sort(), ["deleted", "fast", "slow"]);
  const text = await registry.metrics();
  ok(text.includes("csistoragecapacities_desired_goal 2"));
  ok(text.includes("csistoragecapacities_desired_current 1"));
  ok(text.includes("csistoragecapacities_obsolete 2"));
});

Deno.test("a write that waited for the budget carries the capacity read after the wait", async () => {
  let clock = 0;
  const { controller, record } = world({
    objects: [capacityObject("csisc-a")],
    answers: [answer(9n * GiB), answer(7n * GiB)],
    // One second for the next write slot (QPS 1), during which another volume was created.
    budget: {
      take: () => {
        clock += 1000;
        return Promise.resolve(true);
      },
    },
    now: () => clock,
  });
  await controller.sync("fast", never);
  strictEqual(record.requests.length, 2);
  deepStrictEqual(record.writes, ["update csisc-a@10 7Gi"]);
});

Deno.test("no write, no wait: the budget is only taken for writes, one per write", async () => {
  let taken = 0;
  const { controller, record } = world({
    objects: [
      capacityObject("csisc-a"),
      capacityObject("csisc-dup", { created: "2026-01-02T00:00:00Z" }),
    ],
    answers: [answer(10n * GiB)],
    budget: {
      take: () => {
        taken++;
        return Promise.resolve(true);
      },
    },
  });
  await controller.sync("fast", never);
  deepStrictEqual(record.writes, ["delete csisc-dup"]);
  strictEqual(taken, 1);
  await controller.sync("fast", never);
  strictEqual(taken, 1, "nothing to write the second time");
  strictEqual(record.requests.length, 2, "the budget was free: no second read");
});

Deno.test("a second agent overwriting our object is reported once per hold, never a silent flip-flop", async () => {
  let clock = 1_700_000_000_000;
  const events: EventRecord[] = [];
  const ours: OwnerReference = { ...NODE_OWNER, kind: "Pod", name: "agent-1", uid: "ours" };
  const theirs: OwnerReference = { ...ours, name: "agent-2", uid: "theirs" };
  const { controller, cache, record, registry } = world({
    owner: { current: () => ours, confirm: () => Promise.resolve("ok") },
    foreign: new ForeignWrites({ holdMs: 60_000 }),
    events,
    now: () => clock,
  });
  await controller.sync("fast", never);
  deepStrictEqual(record.writes, ["create csisc-1 10Gi"]);
  // The other agent writes its owner and its driver's capacity.
  const overwrite = () => {
    const object = cache.get("csisc-1")!;
    cache.set("csisc-1", {
      ...object,
      capacity: "5Gi",
      metadata: { ...object.metadata, ownerReferences: [theirs] },
    });
  };
  overwrite();
  deepStrictEqual(await controller.sync("fast", never), { kind: "retryAfter", ms: 60_000 });
  clock += 30_000;
  deepStrictEqual(await controller.sync("fast", never), { kind: "retryAfter", ms: 30_000 });
  deepStrictEqual(record.writes, ["create csisc-1 10Gi"], "no write back during the hold");
  strictEqual(events.length, 1, "reported once");
  strictEqual(events[0]?.type, "Warning");
  strictEqual(events[0]?.reason, "DuplicateAgent");
  deepStrictEqual(events[0]?.subject.kind, "CSIStorageCapacity");
  ok(events[0]?.message.includes("capacity 5Gi (this agent wrote 10Gi)"), events[0]?.message);
  ok(events[0]?.message.includes("controller Pod agent-2 (uid theirs)"), events[0]?.message);
  clock += 30_000;
  deepStrictEqual(await controller.sync("fast", never), { kind: "done" });
  deepStrictEqual(record.writes.length, 2, "written back once after the hold");
  overwrite();
  clock += 1000;
  deepStrictEqual(await controller.sync("fast", never), { kind: "retryAfter", ms: 60_000 });
  strictEqual(events.length, 2, "the next overwrite is reported again");
  strictEqual(
    await metric(registry, "csistoragecapacities_foreign_writes_total"),
    'csistoragecapacities_foreign_writes_total{storageclass="fast"} 2',
  );
});
