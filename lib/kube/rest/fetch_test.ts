import { deepStrictEqual, rejects, strictEqual } from "node:assert/strict";
import { AbortFanout } from "../../queue/abort_fanout.ts";
import type { FetchLike } from "../../runtime/platform.ts";
import {
  fetchJson,
  fetchLines,
  type FetchParts,
  NoAnswerError,
  RequestTimeoutError,
} from "./fetch.ts";
import { KubeApiError } from "./types.ts";

const T = { headerTimeoutMs: 1000, timeoutMs: 1000 };

function parts(fetch: FetchLike, signal?: AbortSignal): FetchParts {
  return {
    fetch,
    url: "https://api/x",
    method: "GET",
    headers: {},
    body: undefined,
    signal,
    aborts: new AbortFanout(),
  };
}

/** A body that sends `chunks` and then stays open until the request is aborted, or ends. */
function streamingFetch(chunks: string[], options: { end: boolean }): FetchLike {
  return (_url, init) => {
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
        if (options.end) controller.close();
        init.signal?.addEventListener("abort", () => controller.error(new Error("aborted")));
      },
    });
    return Promise.resolve(new Response(body, { status: 200 }));
  };
}

Deno.test("fetchJson() parses the answer, gives undefined for an empty one", async () => {
  const answer = (text: string) => () => Promise.resolve(new Response(text, { status: 200 }));
  deepStrictEqual(await fetchJson(parts(answer('{"kind":"Pod"}')), T), { kind: "Pod" });
  strictEqual(await fetchJson(parts(answer("")), T), undefined);
});

Deno.test("fetchJson() parses a list without its items' managedFields only when asked", async () => {
  const item = {
    metadata: { name: "a", managedFields: [{ manager: "m", fieldsV1: { "f:spec": {} } }] },
    spec: { volumeName: "pv-a" },
  };
  const list = JSON.stringify({ items: [item] });
  const answer = () => Promise.resolve(new Response(list, { status: 200 }));
  deepStrictEqual(await fetchJson({ ...parts(answer), withoutManagedFields: true }, T), {
    items: [{ metadata: { name: "a" }, spec: { volumeName: "pv-a" } }],
  });
  deepStrictEqual(await fetchJson(parts(answer), T), { items: [item] });
});

Deno.test("fetchJson() of an unread answer reads the body to its end and parses nothing", async () => {
  let drained = false;
  const created = () => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("{not json, and not looked at"));
      },
      pull(controller) {
        drained = true;
        controller.close();
      },
    });
    return Promise.resolve(new Response(body, { status: 201 }));
  };
  strictEqual(await fetchJson({ ...parts(created), unread: true }, T), undefined);
  strictEqual(drained, true, "the body was read to its end, which frees the connection");
  const conflict = () =>
    Promise.resolve(new Response('{"kind":"Status","reason":"AlreadyExists"}', { status: 409 }));
  await rejects(
    fetchJson({ ...parts(conflict), unread: true }, T),
    (error: unknown) => error instanceof KubeApiError && error.reason === "AlreadyExists",
  );
});

Deno.test("fetchJson() turns a non-2xx Status into KubeApiError with its reason", async () => {
  const conflict = () =>
    Promise.resolve(
      new Response('{"kind":"Status","reason":"AlreadyExists","message":"pv exists"}', {
        status: 409,
      }),
    );
  await rejects(fetchJson(parts(conflict), T), (error: unknown) => {
    strictEqual(error instanceof KubeApiError, true);
    strictEqual((error as KubeApiError).reason, "AlreadyExists");
    strictEqual((error as KubeApiError).status, 409);
    return true;
  });
});

Deno.test("fetchLines() delivers whole lines across chunk borders and resolves at the end", async () => {
  const lines: string[] = [];
  await fetchLines(
    parts(streamingFetch(['{"a":', '1}\n\n{"b":2}\n{"c"', ":3}\n"], { end: true })),
    {
      signal: new AbortController().signal,
      onLine: (line) => lines.push(line),
      inactivityMs: 5_000,
    },
  );
  deepStrictEqual(lines, ['{"a":1}', '{"b":2}', '{"c":3}']);
});

Deno.test("fetchLines() keeps a character split across chunks whole, and many lines of one chunk in order", async () => {
  const bytes = new TextEncoder().encode('{"n":"é"}\n' + '{"i":1}\n{"i":2}\n \n{"i":3}\n');
  const split = bytes.indexOf(0xc3) + 1; // between the two bytes of "é"
  const fetch: FetchLike = () =>
    Promise.resolve(
      new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(bytes.slice(0, split));
            controller.enqueue(bytes.slice(split));
            controller.close();
          },
        }),
        { status: 200 },
      ),
    );
  const lines: string[] = [];
  await fetchLines(parts(fetch), {
    signal: new AbortController().signal,
    onLine: (line) => lines.push(line),
    inactivityMs: 5_000,
  });
  deepStrictEqual(lines, ['{"n":"é"}', '{"i":1}', '{"i":2}', '{"i":3}']);
});

Deno.test("fetchLines() ends a stream that sends nothing for inactivityMs", async () => {
  const lines: string[] = [];
  const started = performance.now();
  await fetchLines(parts(streamingFetch(['{"a":1}\n'], { end: false })), {
    signal: new AbortController().signal,
    onLine: (line) => lines.push(line),
    inactivityMs: 50,
  });
  deepStrictEqual(lines, ['{"a":1}']);
  strictEqual(performance.now() - started < 2_000, true);
});

Deno.test("fetchLines() resolves when the caller aborts an open stream", async () => {
  const caller = new AbortController();
  const done = fetchLines(parts(streamingFetch([], { end: false })), {
    signal: caller.signal,
    onLine: () => {},
    inactivityMs: 60_000,
  });
  setTimeout(() => caller.abort(), 20);
  strictEqual(await done, "aborted");
});

Deno.test("fetchLines() rejects a refused watch with KubeApiError (410 Gone)", async () => {
  const gone = () =>
    Promise.resolve(new Response('{"kind":"Status","reason":"Expired"}', { status: 410 }));
  await rejects(
    fetchLines(parts(gone), {
      signal: new AbortController().signal,
      onLine: () => {},
      inactivityMs: 1_000,
    }),
    (error: unknown) => error instanceof KubeApiError && error.status === 410,
  );
});

/** A server that accepts the connection and never answers (a frozen API server). */
const never: FetchLike = (_url, init) =>
  new Promise((_resolve, reject) =>
    init.signal?.addEventListener("abort", () => reject(new Error("aborted by the caller")))
  );

Deno.test("fetchJson() gives up on response headers slower than the header timeout", async () => {
  await rejects(
    fetchJson(parts(never), { headerTimeoutMs: 30, timeoutMs: 60_000 }),
    (error: unknown) =>
      error instanceof RequestTimeoutError &&
      error.message === "request timed out: no response headers within 30 ms",
  );
});

Deno.test("fetchJson() gives up on a body slower than the overall timeout", async () => {
  const slowBody: FetchLike = (_url, init) => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        init.signal?.addEventListener("abort", () => controller.error(new Error("aborted")));
      },
    });
    return Promise.resolve(new Response(body, { status: 200 }));
  };
  await rejects(
    fetchJson(parts(slowBody), { headerTimeoutMs: 1000, timeoutMs: 40 }),
    /request timed out: no complete answer within 40 ms/,
  );
});

Deno.test("fetchLines() gives up on a watch whose headers never come", async () => {
  const started = performance.now();
  await rejects(
    fetchLines(parts(never), {
      signal: new AbortController().signal,
      onLine: () => {},
      inactivityMs: 60_000,
      headerTimeoutMs: 40,
    }),
    /watch got no response headers within 40 ms/,
  );
  strictEqual(performance.now() - started < 2_000, true);
});

Deno.test("fetchLines() says how an open stream ended: end, idle, aborted", async () => {
  const options = (signal: AbortSignal, inactivityMs: number) => ({
    signal,
    onLine: () => {},
    inactivityMs,
  });
  const open = new AbortController().signal;
  strictEqual(
    await fetchLines(parts(streamingFetch(["{}\n"], { end: true })), options(open, 1000)),
    "end",
  );
  strictEqual(
    await fetchLines(parts(streamingFetch([], { end: false })), options(open, 30)),
    "idle",
  );
  const caller = new AbortController();
  const aborted = fetchLines(
    parts(streamingFetch([], { end: false })),
    options(caller.signal, 60_000),
  );
  setTimeout(() => caller.abort(), 20);
  strictEqual(await aborted, "aborted");
});

Deno.test("fetchJson() on a client's AbortFanout: the caller's abort cancels the request in flight, and an aborted caller's request fails with its reason", async () => {
  const aborts = new AbortFanout();
  const caller = new AbortController();
  const answer = () => Promise.resolve(new Response('{"ok":true}', { status: 200 }));
  for (let i = 0; i < 3; i++) {
    deepStrictEqual(await fetchJson({ ...parts(answer, caller.signal), aborts }, T), { ok: true });
  }
  const pending = fetchJson({ ...parts(never, caller.signal), aborts }, T);
  caller.abort(new Error("shutting down"));
  await rejects(pending, /aborted by the caller/);
  const answersUnlessAborted: FetchLike = (_url, init) =>
    init.signal?.aborted ? Promise.reject(init.signal.reason) : answer();
  await rejects(
    fetchJson({ ...parts(answersUnlessAborted, caller.signal), aborts }, T),
    /shutting down/,
  );
});

Deno.test("fetchJson() and fetchLines() tell no answer (refused, reset, TLS) apart from an answer and from the caller's abort", async () => {
  const refused: FetchLike = () =>
    Promise.reject(new TypeError("error sending request: Connection refused (os error 111)"));
  await rejects(fetchJson(parts(refused), T), (error: unknown) => {
    strictEqual(error instanceof NoAnswerError, true);
    strictEqual(
      (error as Error).message,
      "error sending request: Connection refused (os error 111)",
    );
    return true;
  });
  const stream = { signal: new AbortController().signal, onLine: () => {}, inactivityMs: 1000 };
  await rejects(fetchLines(parts(refused), stream), NoAnswerError);
  const forbidden = () => Promise.resolve(new Response('{"reason":"Forbidden"}', { status: 403 }));
  await rejects(fetchJson(parts(forbidden), T), KubeApiError);
  const caller = new AbortController();
  caller.abort(new Error("shutting down"));
  const abortsLikeFetch: FetchLike = (_url, init) => Promise.reject(init.signal?.reason);
  await rejects(fetchJson(parts(abortsLikeFetch, caller.signal), T), /shutting down/);
});
