/**
 * The informer's loop against a scripted in-memory KubeRest (unit tests only):
 * paging, trimming, watch events, bookmarks, 410 Gone, restarts after errors
 * with jittered backoff, idle and short streams, the idle bound handed to
 * every watch, and the health it reports.
 */
import { deepStrictEqual, ok, strictEqual, throws } from "node:assert/strict";
import { type CacheChange, Informer, type RawObject } from "./informer.ts";
import { KubeApiError, type KubeRequest, type KubeRest } from "../rest/client.ts";
import {
  recordingRest,
  scriptedWatches,
  type WatchScript,
} from "../../../tests/fakes/kube_rest.ts";
import { capturing, quiet } from "../../../tests/fakes/logger.ts";
import { waitFor } from "../../../tests/cluster/wait.ts";

interface Item {
  name: string;
  rv: string;
  keep?: boolean;
}

const raw = (item: Item): RawObject => ({
  metadata: { name: item.name, namespace: "ns", resourceVersion: item.rv },
  keep: item.keep ?? true,
});

/** Lists answer from `pages` (the last list repeats); watches run the next script. */
function scriptedRest(script: { lists: RawObject[][][]; watches: WatchScript[] }) {
  const watches = scriptedWatches(script.watches);
  const rest = recordingRest([], { otherwise: pagedLists(script.lists), watch: watches.watch });
  const seen = {
    lists: rest.requests,
    watches: watches.requests,
    inactivity: watches.inactivityMs,
  };
  return { rest, seen };
}

/** Answers list requests page by page, with continue tokens, list after list. */
function pagedLists(lists: RawObject[][][]): () => unknown {
  let list = 0;
  let page = 0;
  return () => {
    const pages = lists[Math.min(list, lists.length - 1)] ?? [];
    const items = pages[page] ?? [];
    const last = page >= pages.length - 1;
    page = last ? 0 : page + 1;
    if (last) list++;
    const metadata = {
      resourceVersion: `list-${list}`,
      ...(last ? {} : { continue: `page-${page}` }),
    };
    return { metadata, items };
  };
}

const event = (type: string, item: Item) => JSON.stringify({ type, object: raw(item) });

function informer(
  rest: KubeRest,
  overrides: {
    backoff?: { baseMs: number; maxMs: number };
    now?: () => number;
  } = {},
) {
  const changes: string[] = [];
  const { logger, lines } = capturing(5, "json");
  const cache = new Informer<{ name: string; rv: string }>(rest, {
    resource: "things",
    path: "/api/v1/things",
    trim: (object) =>
      object["keep"] === false
        ? undefined
        : { name: object.metadata.name, rv: object.metadata.resourceVersion ?? "" },
    resourceVersionOf: (object) => object.rv,
    logger,
    backoff: overrides.backoff ?? { baseMs: 5, maxMs: 20 },
    idleTimeoutMs: 1234,
    pageSize: 2,
    random: () => 0,
    ...(overrides.now ? { now: overrides.now } : {}),
  });
  cache.onChange((change: CacheChange<{ name: string; rv: string }>) =>
    changes.push(`${change.old ? (change.new ? "update" : "delete") : "add"} ${change.key}`)
  );
  return { cache, changes, lines };
}

/** The delays the informer's "List/watch failed, restarting" lines announce, in order. */
const failureRetries = (lines: string[]): number[] =>
  lines.map((line) => JSON.parse(line))
    .filter((record) => record.msg === "List/watch failed, restarting")
    .map((record) => record.retryInMs);

Deno.test("Informer lists in pages, keeps only what trim keeps, then reports synced", async () => {
  const { rest, seen } = scriptedRest({
    lists: [[[raw({ name: "a", rv: "1" }), raw({ name: "b", rv: "2", keep: false })], [
      raw({ name: "c", rv: "3" }),
    ]]],
    watches: [],
  });
  const { cache, changes } = informer(rest);
  const stop = new AbortController();
  const running = cache.run(stop.signal);
  await waitFor(() => cache.hasSynced(), { description: "synced", timeoutMs: 2000, intervalMs: 5 });
  deepStrictEqual(cache.list().map((item) => item.name), ["a", "c"]);
  deepStrictEqual(changes, ["add ns/a", "add ns/c"]);
  strictEqual(seen.lists[1]?.query?.["continue"], "page-1");
  deepStrictEqual(
    seen.lists.map((request) => request.unmetered),
    [false, true],
    "only the first page of a list counts against the API budget",
  );
  strictEqual(seen.lists[0]?.query?.["limit"], 2);
  stop.abort();
  await running;
});

Deno.test("Informer refuses a change handler once run() has started: it would miss the first list", async () => {
  const { rest } = scriptedRest({ lists: [[[raw({ name: "a", rv: "1" })]]], watches: [] });
  const { cache } = informer(rest);
  const stop = new AbortController();
  const running = cache.run(stop.signal);
  throws(() => cache.onChange(() => {}), /onChange\(\) after run\(\) has started/);
  await waitFor(() => cache.hasSynced(), { description: "synced", timeoutMs: 2000, intervalMs: 5 });
  stop.abort();
  await running;
});

Deno.test("Informer applies watch events, follows bookmarks and resumes from the last resourceVersion", async () => {
  const { rest, seen } = scriptedRest({
    lists: [[[raw({ name: "a", rv: "1" })]]],
    watches: [
      (options) => {
        options.onLine(event("ADDED", { name: "b", rv: "5" }));
        options.onLine(event("MODIFIED", { name: "a", rv: "6" }));
        options.onLine(event("MODIFIED", { name: "b", rv: "7", keep: false }));
        options.onLine(
          JSON.stringify({ type: "BOOKMARK", object: { metadata: { resourceVersion: "9" } } }),
        );
        options.onLine(event("DELETED", { name: "a", rv: "10" }));
        options.onLine(
          JSON.stringify({ type: "BOOKMARK", object: { metadata: { resourceVersion: "11" } } }),
        );
        return Promise.resolve();
      },
    ],
  });
  const { cache, changes } = informer(rest);
  const stop = new AbortController();
  const running = cache.run(stop.signal);
  await waitFor(() => seen.watches.length === 2, {
    description: "2 watches",
    timeoutMs: 2000,
    intervalMs: 5,
  });
  deepStrictEqual(changes, ["add ns/a", "add ns/b", "update ns/a", "delete ns/b", "delete ns/a"]);
  strictEqual(cache.size, 0);
  strictEqual(seen.watches[0]?.query?.["resourceVersion"], "list-1");
  strictEqual(seen.watches[0]?.query?.["allowWatchBookmarks"], true);
  strictEqual(
    seen.watches[1]?.query?.["resourceVersion"],
    "11",
    "the next watch starts after the bookmark",
  );
  strictEqual(seen.lists.length, 1, "a watch that ends normally is resumed, not relisted");
  deepStrictEqual(seen.inactivity, [1234, 1234], "every watch has the idle bound");
  stop.abort();
  await running;
});

Deno.test("Informer relist(): a list under way is followed by another, an open watch ends for one", async () => {
  const { rest, seen } = scriptedRest({
    lists: [[[raw({ name: "a", rv: "1" })]], [[
      raw({ name: "a", rv: "1" }),
      raw({ name: "b", rv: "2" }),
    ]]],
    watches: [],
  });
  const { cache, changes } = informer(rest);
  const listing = rest.request.bind(rest);
  let relistDuringList = true;
  rest.request = <T>(request: KubeRequest): Promise<T> => {
    if (relistDuringList) cache.relist();
    relistDuringList = false;
    return listing<T>(request);
  };
  const stop = new AbortController();
  const running = cache.run(stop.signal);
  const waits = { timeoutMs: 2000, intervalMs: 5 };
  await waitFor(() => seen.watches.length === 1, { description: "a watch", ...waits });
  strictEqual(seen.lists.length, 2, "the list asked for during a list");
  cache.relist();
  await waitFor(() => seen.watches.length === 2, { description: "another watch", ...waits });
  strictEqual(seen.lists.length, 3);
  deepStrictEqual(changes, ["add ns/a", "add ns/b"]);
  strictEqual(cache.health().restarts.relist, 1, "the ended watch counts as a relist");
  strictEqual(cache.health().failingSince, undefined, "not a failure");
  stop.abort();
  await running;
});

Deno.test("Informer relists on 410 Gone and reports objects that vanished meanwhile", async () => {
  const { rest, seen } = scriptedRest({
    lists: [[[raw({ name: "a", rv: "1" }), raw({ name: "b", rv: "2" })]], [[
      raw({ name: "b", rv: "8" }),
    ]]],
    watches: [
      (options) => {
        options.onLine(
          JSON.stringify({
            type: "ERROR",
            object: { metadata: {}, code: 410, message: "too old" },
          }),
        );
        return Promise.resolve();
      },
      () => Promise.reject(new KubeApiError(410, "Gone", "too old resource version")),
    ],
  });
  const { cache, changes } = informer(rest);
  const stop = new AbortController();
  const running = cache.run(stop.signal);
  await waitFor(() => seen.lists.length === 3, {
    description: "3 lists",
    timeoutMs: 2000,
    intervalMs: 5,
  });
  await waitFor(() => seen.watches.length === 3, {
    description: "3 watches",
    timeoutMs: 2000,
    intervalMs: 5,
  });
  deepStrictEqual(changes, ["add ns/a", "add ns/b", "delete ns/a", "update ns/b"]);
  const health = cache.health();
  deepStrictEqual([health.restarts.expired, health.restarts.error], [2, 0]);
  strictEqual(health.failingSince, undefined, "410 is a relist, not a failure");
  stop.abort();
  await running;
});

Deno.test("Informer restarts after an error with backoff and never stops on its own", async () => {
  const { rest, seen } = scriptedRest({
    lists: [[[raw({ name: "a", rv: "1" })]]],
    watches: [
      () => Promise.reject(new Error("connection reset")),
      () => Promise.reject(new KubeApiError(500, "InternalError", "etcd is down")),
      (options) => {
        options.onLine("not json");
        return Promise.resolve();
      },
    ],
  });
  const { cache } = informer(rest);
  const stop = new AbortController();
  const running = cache.run(stop.signal);
  await waitFor(() => seen.watches.length === 4, {
    description: "4 watches",
    timeoutMs: 2000,
    intervalMs: 5,
  });
  strictEqual(cache.health().restarts.error, 3);
  ok(cache.hasSynced(), "the cache stays usable while the watch restarts");
  stop.abort();
  await running;
});

Deno.test("Informer waits a jittered backoff before relisting after 410 Gone", async () => {
  const { rest, seen } = scriptedRest({
    lists: [[[raw({ name: "a", rv: "1" })]]],
    watches: [() => Promise.reject(new KubeApiError(410, "Expired", "too old"))],
  });
  // random() = 0 takes nothing off: the first retry waits the whole base delay.
  const { cache } = informer(rest, { backoff: { baseMs: 200, maxMs: 1000 } });
  const stop = new AbortController();
  const running = cache.run(stop.signal);
  await waitFor(() => seen.watches.length === 1, {
    description: "1 watches",
    timeoutMs: 2000,
    intervalMs: 5,
  });
  const refused = performance.now();
  await waitFor(() => seen.lists.length === 2, {
    description: "2 lists",
    timeoutMs: 2000,
    intervalMs: 5,
  });
  ok(performance.now() - refused >= 190, "the relist after 410 is not immediate");
  stop.abort();
  await running;
});

Deno.test("Informer relists after a watch that went idle, and reports the stall", async () => {
  const { rest, seen } = scriptedRest({
    lists: [[[raw({ name: "a", rv: "1" })]]],
    watches: [() => Promise.resolve("idle")],
  });
  const { cache } = informer(rest);
  const stop = new AbortController();
  const running = cache.run(stop.signal);
  await waitFor(() => seen.lists.length === 2 && seen.watches.length === 2, {
    description: "2 lists and 2 watches",
    timeoutMs: 2000,
    intervalMs: 5,
  });
  const health = cache.health();
  strictEqual(health.restarts.idle_timeout, 1);
  strictEqual(health.failingSince, undefined, "the relist that followed succeeded");
  strictEqual(seen.watches[1]?.query?.["resourceVersion"], "list-2", "watching from the new list");
  stop.abort();
  await running;
});

Deno.test("Informer counts a stream shorter than the healthy minimum as a failure", async () => {
  let clock = 1_000_000;
  const ends: number[] = [];
  const short: WatchScript = () => {
    ends.push(performance.now());
    return Promise.resolve("end");
  };
  const { rest, seen } = scriptedRest({
    lists: [[[raw({ name: "a", rv: "1" })]]],
    watches: [short, short, short, () => {
      clock += 10_000; // this one lived the healthy minimum
      return Promise.resolve("end");
    }],
  });
  const { cache } = informer(rest, { backoff: { baseMs: 40, maxMs: 1000 }, now: () => clock });
  const stop = new AbortController();
  const running = cache.run(stop.signal);
  await waitFor(() => seen.watches.length === 3, {
    description: "3 watches",
    timeoutMs: 2000,
    intervalMs: 5,
  });
  let health = cache.health();
  strictEqual(health.failingSince, 1_000_000, "failing since the first short stream");
  ok(health.lastError?.includes("ended after less than 10000 ms"), String(health.lastError));
  await waitFor(() => seen.watches.length === 5, {
    description: "5 watches",
    timeoutMs: 2000,
    intervalMs: 5,
  });
  // Backoff doubled between short streams: 40 ms, then 80 ms.
  ok((ends[1] ?? 0) - (ends[0] ?? 0) >= 35 && (ends[2] ?? 0) - (ends[1] ?? 0) >= 75, `${ends}`);
  health = cache.health();
  strictEqual(health.restarts.stream_end, 4);
  strictEqual(health.up, true, "the fifth watch is open");
  clock += 10_000;
  strictEqual(cache.health().failingSince, undefined, "an open stream that lived long is healthy");
  stop.abort();
  await running;
});

Deno.test("Informer resumes at once from the last resourceVersion after a short stream that sent events", async () => {
  // kube-apiserver closes a watcher that falls behind its watch cache after
  // any number of events; a backoff here would only delay them.
  const clock = 1_000_000; // never advances: every stream is "short"
  const { rest, seen } = scriptedRest({
    lists: [[[raw({ name: "a", rv: "1" })]]],
    watches: [
      (options) => {
        options.onLine(event("MODIFIED", { name: "a", rv: "5" }));
        return Promise.resolve("end");
      },
      (options) => {
        options.onLine(
          JSON.stringify({ type: "BOOKMARK", object: { metadata: { resourceVersion: "7" } } }),
        );
        return Promise.resolve("end");
      },
    ],
  });
  const { cache, changes, lines } = informer(rest, {
    // A backoff would outlast the 2 s wait.
    backoff: { baseMs: 60_000, maxMs: 60_000 },
    now: () => clock,
  });
  const stop = new AbortController();
  const running = cache.run(stop.signal);
  await waitFor(() => seen.watches.length === 3, {
    description: "3 watches",
    timeoutMs: 2000,
    intervalMs: 5,
  });
  deepStrictEqual(
    seen.watches.map((request) => request.query?.["resourceVersion"]),
    ["list-1", "5", "7"],
  );
  deepStrictEqual(changes, ["add ns/a", "update ns/a"]);
  deepStrictEqual(failureRetries(lines), [], "no failure announced");
  const health = cache.health();
  strictEqual(health.failingSince, undefined);
  strictEqual(health.restarts.stream_end, 2);
  strictEqual(seen.lists.length, 1, "resumed, not relisted");
  stop.abort();
  await running;
});

Deno.test("Informer starts its backoff over after a watch that lasted, however it ended", async () => {
  let clock = 1_000_000;
  const broken: WatchScript = () => Promise.reject(new Error("connection reset"));
  const { rest, seen } = scriptedRest({
    lists: [[[raw({ name: "a", rv: "1" })]]],
    watches: [broken, broken, () => {
      clock += 10_000; // this one lived the healthy minimum, then broke
      return Promise.reject(new Error("connection reset"));
    }],
  });
  const { cache, lines } = informer(rest, {
    backoff: { baseMs: 10, maxMs: 1000 },
    now: () => clock,
  });
  const stop = new AbortController();
  const running = cache.run(stop.signal);
  await waitFor(() => seen.watches.length === 4, {
    description: "4 watches",
    timeoutMs: 2000,
    intervalMs: 5,
  });
  // 10, 20, then 10 again: the third failure came after a watch that lasted.
  deepStrictEqual(failureRetries(lines), [10, 20, 10]);
  stop.abort();
  await running;
});

Deno.test("Informer relists after the base delay on a 410 that ends an escalation; 410s in a row escalate", async () => {
  const broken: WatchScript = () => Promise.reject(new Error("connection refused"));
  const gone: WatchScript = () => Promise.reject(new KubeApiError(410, "Expired", "too old"));
  const { rest, seen } = scriptedRest({
    lists: [[[raw({ name: "a", rv: "1" })]]],
    watches: [broken, broken, broken, gone, gone],
  });
  const { cache, lines } = informer(rest, { backoff: { baseMs: 10, maxMs: 1000 } });
  const stop = new AbortController();
  const running = cache.run(stop.signal);
  await waitFor(() => seen.watches.length === 6, {
    description: "6 watches",
    timeoutMs: 2000,
    intervalMs: 5,
  });
  const retries = lines.map((line) => JSON.parse(line))
    .filter((record) => record.retryInMs !== undefined)
    .map((record) => `${record.msg}: ${record.retryInMs}`);
  deepStrictEqual(retries, [
    "List/watch failed, restarting: 10",
    "List/watch failed, restarting: 20",
    "List/watch failed, restarting: 40",
    // The server answered: the API server is back; relist soon.
    "Watch expired (410 Gone), relisting: 10",
    "Watch expired (410 Gone), relisting: 20",
  ]);
  stop.abort();
  await running;
});

Deno.test("Informer waiting out a backoff after a lost connection retries soon once the API server answers another request", async () => {
  const broken: WatchScript = () => Promise.reject(new Error("ECONNREFUSED"));
  const { rest, seen } = scriptedRest({
    lists: [[[raw({ name: "a", rv: "1" })]]],
    watches: Array.from({ length: 10 }, () => broken),
  });
  const back = Promise.withResolvers<void>();
  // Delays 2, 4, ... 512 ms, then 1024 ms after the tenth refusal.
  const { cache, lines } = informer({ ...rest, answered: () => back.promise }, {
    backoff: { baseMs: 2, maxMs: 60_000 },
  });
  const stop = new AbortController();
  const running = cache.run(stop.signal);
  await waitFor(() => seen.watches.length === 10, {
    description: "10 watches",
    timeoutMs: 2000,
    intervalMs: 5,
  });
  await new Promise((resolve) => setTimeout(resolve, 20)); // into the 1024 ms wait
  const answeredAt = performance.now();
  back.resolve(); // e.g. the PV saver's retry got an answer
  await waitFor(() => seen.watches.length === 11, {
    description: "11 watches",
    timeoutMs: 2000,
    intervalMs: 5,
  });
  const waited = performance.now() - answeredAt;
  ok(waited < 800, `retried ${waited} ms after the answer, not after the 1024 ms backoff`);
  const messages = lines.map((line) => JSON.parse(line).msg);
  ok(messages.includes("The API server answers again: retrying"), lines.join("\n"));
  stop.abort();
  await running;
});

Deno.test("Informer starts its backoff over once when the server answers again after lost connections", async () => {
  const lost: WatchScript = () => Promise.reject(new Error("ECONNREFUSED"));
  const forbidden: WatchScript = () =>
    Promise.reject(new KubeApiError(403, "Forbidden", "cannot watch (authorizer warming up)"));
  const { rest, seen } = scriptedRest({
    lists: [[[raw({ name: "a", rv: "1" })]]],
    watches: [lost, lost, lost, forbidden, forbidden, lost, forbidden],
  });
  const { cache, lines } = informer(rest, { backoff: { baseMs: 2, maxMs: 1000 } });
  const stop = new AbortController();
  const running = cache.run(stop.signal);
  await waitFor(() => seen.watches.length === 8, {
    description: "8 watches",
    timeoutMs: 2000,
    intervalMs: 5,
  });
  // Lost 2, 4, 8; the server answers (403): 2, then 4; lost 8, answered again: no second reset, 16.
  deepStrictEqual(failureRetries(lines), [2, 4, 8, 2, 4, 8, 16]);
  stop.abort();
  await running;
});

Deno.test("Informer health(): last list, last event, failing since the first error, up", async () => {
  let clock = 5_000;
  let failList = true;
  const { rest, seen } = scriptedRest({ lists: [[[raw({ name: "a", rv: "1" })]]], watches: [] });
  const request = rest.request.bind(rest);
  rest.request = <T>(req: KubeRequest) => {
    if (failList) return Promise.reject(new Error("connection refused"));
    return request<T>(req);
  };
  const { cache } = informer(rest, { now: () => clock });
  const stop = new AbortController();
  const running = cache.run(stop.signal);
  await waitFor(() => cache.health().restarts.error >= 2, {
    description: "2 restarts after errors",
    timeoutMs: 2000,
    intervalMs: 5,
  });
  let health = cache.health();
  deepStrictEqual(
    [health.synced, health.up, health.failingSince, health.lastError],
    [false, false, 5_000, "connection refused"],
  );
  clock = 9_000;
  failList = false;
  await waitFor(() => seen.watches.length === 1, {
    description: "1 watches",
    timeoutMs: 2000,
    intervalMs: 5,
  });
  health = cache.health();
  deepStrictEqual(
    [health.synced, health.up, health.failingSince, health.lastListAt, health.objects],
    [true, true, undefined, 9_000, 1],
  );
  stop.abort();
  await running;
});

Deno.test("Informer cuts managedFields before parsing only for a built-in kind", async () => {
  // A claim's watch line as kube-apiserver writes a built-in kind: managedFields end its metadata.
  const line = JSON.stringify({
    type: "ADDED",
    object: {
      metadata: {
        name: "b",
        namespace: "ns",
        resourceVersion: "5",
        managedFields: [{ manager: "kube-scheduler", fieldsV1: { "f:metadata": {} } }],
      },
      spec: { volumeName: "pv-b" },
    },
  });
  const seenByTrim = async (cutManagedFields: boolean) => {
    const { rest, seen } = scriptedRest({
      lists: [[[]]],
      watches: [(options) => Promise.resolve(options.onLine(line))],
    });
    const trimmed: RawObject[] = [];
    const cache = new Informer<RawObject>(rest, {
      resource: "things",
      path: "/api/v1/things",
      trim: (object) => (trimmed.push(object), object),
      resourceVersionOf: (object) => object.metadata.resourceVersion ?? "",
      logger: quiet,
      cutManagedFields,
    });
    const stop = new AbortController();
    const running = cache.run(stop.signal);
    await waitFor(() => trimmed.length === 1, {
      description: "an object trimmed",
      timeoutMs: 2000,
      intervalMs: 5,
    });
    stop.abort();
    await running;
    return { object: trimmed[0], listCut: seen.lists[0]?.withoutManagedFields };
  };
  const cut = await seenByTrim(true);
  deepStrictEqual(cut.object, {
    metadata: { name: "b", namespace: "ns", resourceVersion: "5" },
    spec: { volumeName: "pv-b" },
  });
  strictEqual(cut.listCut, true, "list pages are cut too");
  const whole = await seenByTrim(false);
  ok(
    "managedFields" in (whole.object?.metadata ?? {}),
    "a custom resource's object is parsed whole",
  );
  strictEqual(whole.listCut, false);
});

Deno.test("Informer health() changes nothing: a failure after a stream that lasted is failing anew, read or not", async () => {
  const failingSinceAfterBreak = async (readWhileOpen: boolean) => {
    let clock = 1_000_000;
    let breakStream = () => {};
    const broken = new Promise<void>((resolve) => (breakStream = resolve));
    let lasted = false;
    const { rest, seen } = scriptedRest({
      lists: [[[raw({ name: "a", rv: "1" })]]],
      watches: [() => Promise.resolve("end"), async () => {
        clock += 10_000; // open for the healthy minimum, without an event
        lasted = true;
        await broken;
        return "broken";
      }],
    });
    const { cache } = informer(rest, { now: () => clock });
    const stop = new AbortController();
    const running = cache.run(stop.signal);
    await waitFor(() => lasted, {
      description: "the watch lasted",
      timeoutMs: 2000,
      intervalMs: 5,
    });
    if (readWhileOpen) strictEqual(cache.health().failingSince, undefined);
    breakStream();
    await waitFor(() => seen.watches.length === 3, {
      description: "3 watches",
      timeoutMs: 2000,
      intervalMs: 5,
    });
    const health = cache.health();
    stop.abort();
    await running;
    return health.failingSince;
  };
  strictEqual(await failingSinceAfterBreak(true), 1_010_000);
  strictEqual(await failingSinceAfterBreak(false), 1_010_000, "the same without a read");
});
