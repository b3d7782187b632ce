import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { EventSender, MAX_TRIES_PER_EVENT } from "./events.ts";
import { type EventRecord } from "../model/events.ts";
import { KubeApiError, type KubeRequest, type KubeRest } from "./rest/client.ts";
import { recordingRest } from "../../tests/fakes/kube_rest.ts";
import { capturing, quiet } from "../../tests/fakes/logger.ts";
import { waitFor } from "../../tests/cluster/wait.ts";

/** The shared fake, whose answers can be held back; PATCHes fail with `failPatchWith`. */
function heldRest(options: { failPatchWith?: number } = {}) {
  let release: () => void = () => {};
  let gate = Promise.resolve();
  const rest = recordingRest([], {
    otherwise: async (request) => {
      await gate;
      if (request.method === "PATCH" && options.failPatchWith !== undefined) {
        throw new KubeApiError(options.failPatchWith, "NotFound", "events not found");
      }
    },
  });
  return Object.assign(rest, {
    hold: () => (gate = new Promise((resolve) => (release = resolve))),
    release: () => release(),
  });
}

const failed: EventRecord = {
  subject: { kind: "PersistentVolumeClaim", namespace: "apps", name: "data", uid: "u1" },
  type: "Warning",
  reason: "ProvisioningFailed",
  message: "rpc error: code = ResourceExhausted desc = pool full",
};

async function drain(
  sender: EventSender,
  run: Promise<void>,
  stop: AbortController,
): Promise<void> {
  for (let i = 0; i < 200 && sender.pending > 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  stop.abort();
  await run;
}

Deno.test("EventSender merges repeats waiting in the buffer into one Event with a count", async () => {
  const fake = heldRest();
  const sender = new EventSender(fake, {
    component: "drv_node-a",
    host: "node-a",
    logger: quiet,
  });
  fake.hold();
  const stop = new AbortController();
  const run = sender.run(stop.signal);
  sender.record(failed);
  await new Promise((resolve) => setTimeout(resolve, 5));
  sender.record(failed);
  sender.record(failed);
  fake.release();
  await drain(sender, run, stop);
  deepStrictEqual(fake.requests.map((request) => request.method), ["POST", "PATCH"]);
  strictEqual((fake.requests[0]?.body as { count: number }).count, 1);
  strictEqual(
    (fake.requests[1]?.body as { count: number }).count,
    3,
    "the repeats recorded while the first was being written patch its count",
  );
});

Deno.test("EventSender patches the count of an Event it already wrote, and uses low priority", async () => {
  const fake = heldRest();
  const sender = new EventSender(fake, {
    component: "drv_node-a",
    host: "node-a",
    logger: quiet,
  });
  const stop = new AbortController();
  const run = sender.run(stop.signal);
  sender.record(failed);
  await new Promise((resolve) => setTimeout(resolve, 20));
  sender.record(failed);
  await drain(sender, run, stop);
  deepStrictEqual(fake.requests.map((request) => request.method), ["POST", "PATCH"]);
  const created = fake.requests[0]?.body as {
    metadata: { name: string; namespace: string };
    source: unknown;
  };
  strictEqual(created.metadata.namespace, "apps");
  deepStrictEqual(created.source, { component: "drv_node-a", host: "node-a" });
  strictEqual(fake.requests[1]?.path, `/api/v1/namespaces/apps/events/${created.metadata.name}`);
  strictEqual((fake.requests[1]?.body as { count: number }).count, 2);
  deepStrictEqual(fake.requests.map((request) => request.priority), ["low", "low"]);
});

Deno.test("EventSender creates a new Event when the one to patch is gone", async () => {
  const fake = heldRest({ failPatchWith: 404 });
  const sender = new EventSender(fake, { component: "c", host: "h", logger: quiet });
  const stop = new AbortController();
  const run = sender.run(stop.signal);
  sender.record(failed);
  await new Promise((resolve) => setTimeout(resolve, 20));
  sender.record(failed);
  await drain(sender, run, stop);
  deepStrictEqual(fake.requests.map((request) => request.method), ["POST", "PATCH", "POST"]);
});

Deno.test("EventSender puts events of cluster-scoped objects in the default namespace", async () => {
  const fake = heldRest();
  const sender = new EventSender(fake, { component: "c", host: "h", logger: quiet });
  const stop = new AbortController();
  const run = sender.run(stop.signal);
  sender.record({
    ...failed,
    subject: { kind: "PersistentVolume", name: "pvc-1", uid: "u2" },
    reason: "VolumeFailedDelete",
  });
  await drain(sender, run, stop);
  strictEqual(fake.requests[0]?.path, "/api/v1/namespaces/default/events");
});

Deno.test("Events are named <object>.<hex>, each differently, in one sender and across senders", async () => {
  const names: string[] = [];
  for (const _ of [1, 2]) {
    const fake = heldRest();
    const sender = new EventSender(fake, { component: "c", host: "h", logger: quiet });
    const stop = new AbortController();
    const run = sender.run(stop.signal);
    for (const reason of ["Provisioning", "ProvisioningSucceeded", "ExternalProvisioning"]) {
      sender.record({ ...failed, type: "Normal", reason });
    }
    await drain(sender, run, stop);
    names.push(
      ...fake.requests.map((request) =>
        (request.body as { metadata: { name: string } }).metadata.name
      ),
    );
  }
  strictEqual(names.length, 6);
  for (const name of names) strictEqual(/^data\.[0-9a-f]{13,}$/.test(name), true, name);
  strictEqual(new Set(names).size, 6, names.join(" "));
});

Deno.test("record() never blocks: a full buffer drops the event and counts it", () => {
  const fake = heldRest();
  let dropped = 0;
  const sender = new EventSender(fake, {
    component: "c",
    host: "h",
    logger: quiet,
    pendingObserver: { size: () => {}, evicted: () => dropped++ },
  });
  for (let i = 0; i < 4101; i++) sender.record({ ...failed, message: `failure ${i}` });
  strictEqual(sender.pending, 4096);
  strictEqual(dropped, 5);
});

Deno.test("the memory of written Events is bounded: past it the oldest is forgotten", async () => {
  const fake = heldRest();
  const sizes: number[] = [];
  let evicted = 0;
  const sender = new EventSender(fake, {
    component: "c",
    host: "h",
    logger: quiet,
    maxWritten: 3,
    writtenObserver: { size: (entries) => sizes.push(entries), evicted: () => evicted++ },
  });
  const stop = new AbortController();
  const run = sender.run(stop.signal);
  for (let i = 0; i < 5; i++) sender.record({ ...failed, message: `failure ${i}` });
  await drain(sender, run, stop);
  deepStrictEqual([Math.max(...sizes), evicted], [3, 2]);
  // failure 0 was forgotten: its repeat is a new Event (POST), not a patch of the old one.
  const again = new AbortController();
  const rerun = sender.run(again.signal);
  sender.record({ ...failed, message: "failure 0" });
  sender.record({ ...failed, message: "failure 4" });
  await drain(sender, rerun, again);
  deepStrictEqual(fake.requests.slice(5).map((request) => request.method).sort(), [
    "PATCH",
    "POST",
  ]);
});

Deno.test("written Events past the 10-minute merge window are forgotten; newer ones are kept", async () => {
  const fake = heldRest();
  const sizes: number[] = [];
  let clock = Date.parse("2026-01-01T00:00:00Z");
  const sender = new EventSender(fake, {
    component: "c",
    host: "h",
    logger: quiet,
    now: () => clock,
    writtenObserver: { size: (entries) => sizes.push(entries), evicted: () => {} },
  });
  const send = async (messages: string[]) => {
    const stop = new AbortController();
    const run = sender.run(stop.signal);
    for (const message of messages) sender.record({ ...failed, message });
    await drain(sender, run, stop);
  };
  await send(["old 1", "old 2"]);
  clock += 9 * 60_000;
  await send(["newer"]);
  deepStrictEqual(sizes.at(-1), 3, "nothing is past the window yet");
  clock += 2 * 60_000;
  await send(["newest"]);
  deepStrictEqual(sizes.at(-1), 2, "old 1 and old 2 (11 minutes) are forgotten, newer (2) kept");
  await send(["newer"]);
  deepStrictEqual(fake.requests.at(-1)?.method, "PATCH", "a repeat within the window still merges");
});

Deno.test("an Event message is cut to 1024 bytes, on a character boundary, and says so", async () => {
  const fake = heldRest();
  const sender = new EventSender(fake, { component: "c", host: "h", logger: quiet });
  const stop = new AbortController();
  const run = sender.run(stop.signal);
  const claimName = "é".repeat(600); // 1200 bytes
  sender.record({ ...failed, message: `claim ${claimName} failed` });
  sender.record({ ...failed, message: "short" });
  await drain(sender, run, stop);
  const messages = fake.requests.map((request) => (request.body as { message: string }).message);
  const long = messages.find((message) => message.startsWith("claim"));
  strictEqual(new TextEncoder().encode(long).length <= 1024, true);
  strictEqual(long?.endsWith("é [...]"), true, String(long?.slice(-20)));
  strictEqual(messages.includes("short"), true);
});

Deno.test("EventSender writes up to four Events at once, and a repeat waits for its first write", async () => {
  let inFlight = 0;
  let most = 0;
  const methods: string[] = [];
  const rest = recordingRest([], {
    otherwise: async (request) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 10));
      methods.push(request.method);
      inFlight--;
    },
  });
  const sender = new EventSender(rest, { component: "c", host: "h", logger: quiet });
  const stop = new AbortController();
  const run = sender.run(stop.signal);
  for (let i = 0; i < 8; i++) sender.record({ ...failed, message: `failure ${i}` });
  await new Promise((resolve) => setTimeout(resolve, 3)); // failure 0 is being written now
  sender.record({ ...failed, message: "failure 0" });
  await drain(sender, run, stop);
  strictEqual(most, 4);
  deepStrictEqual(
    methods.filter((method) => method === "PATCH").length,
    1,
    "the repeat patched, not created",
  );
});

/** A sender whose tries of a write that got no answer are 1 ms apart. */
function retryingSender(rest: KubeRest, logger = quiet): EventSender {
  return new EventSender(rest, { component: "c", host: "h", logger, retrySleepMs: 1 });
}

const nameOf = (request: KubeRequest) =>
  (request.body as { metadata: { name: string } }).metadata.name;

Deno.test("a write that got no answer is tried again with the same name, as client-go's recordToSink", async () => {
  const noAnswer = () => new TypeError("fetch failed: connection refused");
  const fake = recordingRest([noAnswer(), noAnswer()]);
  const sender = retryingSender(fake);
  const stop = new AbortController();
  const run = sender.run(stop.signal);
  sender.record(failed);
  await waitFor(() => fake.requests.length === 3, {
    description: "3 requests",
    timeoutMs: 1000,
    intervalMs: 5,
  });
  stop.abort();
  await run;
  deepStrictEqual(fake.requests.map((request) => request.method), ["POST", "POST", "POST"]);
  strictEqual(new Set(fake.requests.map(nameOf)).size, 1, "every try creates the same Event");
});

Deno.test("a write the API server refused is not tried again; a 409 for a retried create counts as written", async () => {
  const refused = recordingRest([new KubeApiError(422, "Invalid", "bad event")]);
  const first = retryingSender(refused);
  const stop = new AbortController();
  const run = first.run(stop.signal);
  first.record(failed);
  await drain(first, run, stop);
  await new Promise((resolve) => setTimeout(resolve, 20));
  strictEqual(refused.requests.length, 1);

  const landed = recordingRest([
    new TypeError("socket hang up"),
    new KubeApiError(409, "AlreadyExists", ""),
  ]);
  const second = retryingSender(landed);
  const again = new AbortController();
  const running = second.run(again.signal);
  second.record(failed);
  await waitFor(() => landed.requests.length === 2, {
    description: "2 requests",
    timeoutMs: 1000,
    intervalMs: 5,
  });
  second.record(failed);
  await waitFor(() => landed.requests.length === 3, {
    description: "3 requests",
    timeoutMs: 1000,
    intervalMs: 5,
  });
  again.abort();
  await running;
  const [, created, patch] = landed.requests;
  strictEqual(patch?.method, "PATCH", "the repeat patches the Event the first try created");
  strictEqual(patch?.path.endsWith(`/${nameOf(created!)}`), true, patch?.path);
});

Deno.test("an Event waiting between tries when the agent stops is written by the flush, under the same name", async () => {
  const fake = recordingRest([new TypeError("fetch failed: connection refused")]);
  const sender = new EventSender(fake, {
    component: "c",
    host: "h",
    logger: quiet,
    retrySleepMs: 60_000,
  });
  const stop = new AbortController();
  const run = sender.run(stop.signal, { flushMs: 1000 });
  sender.record(failed);
  await waitFor(() => fake.requests.length === 1, {
    description: "1 request",
    timeoutMs: 1000,
    intervalMs: 5,
  });
  stop.abort();
  await run;
  deepStrictEqual(fake.requests.map((request) => request.method), ["POST", "POST"]);
  strictEqual(nameOf(fake.requests[1]!), nameOf(fake.requests[0]!));
  strictEqual(sender.pending, 0);
});

Deno.test(`a write that never gets an answer is given up after ${MAX_TRIES_PER_EVENT} tries`, async () => {
  const fake = recordingRest(Array.from({ length: 20 }, () => new TypeError("fetch failed")));
  const { logger, lines } = capturing(0);
  const sender = retryingSender(fake, logger);
  const stop = new AbortController();
  const run = sender.run(stop.signal);
  sender.record(failed);
  await waitFor(() => lines.some((line) => line.includes("Could not write event")), {
    description: "the give-up line",
    timeoutMs: 1000,
    intervalMs: 5,
  });
  stop.abort();
  await run;
  strictEqual(fake.requests.length, MAX_TRIES_PER_EVENT);
});
