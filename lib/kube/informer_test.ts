/**
 * The informer's loop against a scripted in-memory KubeRest (unit tests only):
 * paging, trimming, watch events, bookmarks, 410 Gone, restarts after errors
 * and the staleness bound handed to every watch.
 */
import { deepStrictEqual, ok, strictEqual, throws } from "node:assert/strict";
import { createLogger } from "../log/logger.ts";
import { type CacheChange, Informer, type RawObject } from "./informer.ts";
import { KubeApiError, type KubeRequest, type KubeRest, type StreamOptions } from "./rest.ts";

interface Item {
  name: string;
  rv: string;
  keep?: boolean;
}

const raw = (item: Item): RawObject => ({
  metadata: { name: item.name, namespace: "ns", resourceVersion: item.rv },
  keep: item.keep ?? true,
});

type WatchScript = (options: StreamOptions, request: KubeRequest) => Promise<void>;

/** Lists answer from `pages` (the last list repeats); watches run the next script. */
function scriptedRest(script: { lists: RawObject[][][]; watches: WatchScript[] }) {
  const seen = {
    lists: [] as KubeRequest[],
    watches: [] as KubeRequest[],
    inactivity: [] as number[],
  };
  let list = 0;
  let page = 0;
  const rest: KubeRest = {
    request: <T>(request: KubeRequest) => {
      seen.lists.push(request);
      const pages = script.lists[Math.min(list, script.lists.length - 1)] ?? [];
      const items = pages[page] ?? [];
      const last = page >= pages.length - 1;
      page = last ? 0 : page + 1;
      if (last) list++;
      const metadata = {
        resourceVersion: `list-${list}`,
        ...(last ? {} : { continue: `page-${page}` }),
      };
      return Promise.resolve({ metadata, items } as T);
    },
    stream: (request, options) => {
      seen.watches.push(request);
      seen.inactivity.push(options.inactivityMs);
      const next = script.watches.shift();
      if (next === undefined) {
        return new Promise((resolve) =>
          options.signal.addEventListener("abort", () => resolve(), { once: true })
        );
      }
      return next(options, request);
    },
    close: () => {},
  };
  return { rest, seen };
}

const event = (type: string, item: Item) => JSON.stringify({ type, object: raw(item) });

function informer(rest: KubeRest) {
  const changes: string[] = [];
  const cache = new Informer<{ name: string; rv: string }>(rest, {
    resource: "things",
    path: "/api/v1/things",
    trim: (object) =>
      object["keep"] === false
        ? undefined
        : { name: object.metadata.name, rv: object.metadata.resourceVersion ?? "" },
    resourceVersionOf: (object) => object.rv,
    logger: createLogger({ verbosity: 0, sink: { write: () => {} } }),
    backoff: { baseMs: 5, maxMs: 20 },
    staleAfterMs: 1234,
    pageSize: 2,
    random: () => 0,
  });
  cache.onChange((change: CacheChange<{ name: string; rv: string }>) =>
    changes.push(`${change.old ? (change.new ? "update" : "delete") : "add"} ${change.key}`)
  );
  return { cache, changes };
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !condition(); i++) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  ok(condition(), "condition not reached");
}

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
  await until(() => cache.hasSynced());
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
  await until(() => cache.hasSynced());
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
  await until(() => seen.watches.length === 2);
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
  deepStrictEqual(seen.inactivity, [1234, 1234], "every watch has the staleness bound");
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
  await until(() => seen.lists.length === 3);
  await until(() => seen.watches.length === 3);
  deepStrictEqual(changes, ["add ns/a", "add ns/b", "delete ns/a", "update ns/b"]);
  strictEqual(cache.restarts, 0, "410 is a relist, not an error");
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
  await until(() => seen.watches.length === 4);
  strictEqual(cache.restarts, 3);
  ok(cache.hasSynced(), "the cache stays usable while the watch restarts");
  stop.abort();
  await running;
});
