/**
 * The REST client over the transport the binary ships (the runtime's fetch,
 * with the TLS settings bound by lib/runtime/platform.ts), against a real
 * HTTP server on a local port.
 */
import { deepStrictEqual, rejects, strictEqual } from "node:assert/strict";
import { TokenBucket } from "../../queue/token_bucket.ts";
import type { KubeCredentials } from "./credentials.ts";
import { createKubeRest, KubeApiError, type KubeRest, MAX_RETRY_AFTER_RETRIES } from "./client.ts";

interface Seen {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** A server that records each request and answers from `answer`. */
async function withServer(
  answer: (request: Request) => Response,
  test: (rest: KubeRest, seen: Seen[], bucket: TokenBucket) => Promise<void>,
): Promise<void> {
  const seen: Seen[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    seen.push({
      method: req.method,
      url: new URL(req.url).pathname + new URL(req.url).search,
      headers: Object.fromEntries(req.headers),
      body: await req.text(),
    });
    return answer(req);
  });
  const credentials: KubeCredentials = {
    server: new URL(`http://127.0.0.1:${server.addr.port}/base/`),
    tls: {},
    headers: () => Promise.resolve({ authorization: "Bearer t0ken" }),
  };
  const bucket = new TokenBucket({ qps: 0.001, burst: 2 });
  const rest = createKubeRest(credentials, { budget: bucket, userAgent: "agent/test" });
  try {
    await test(rest, seen, bucket);
  } finally {
    rest.close();
    await server.shutdown();
  }
}

Deno.test("request() sends the path, query, body and headers, and parses the JSON answer", async () => {
  await withServer(() => Response.json({ kind: "PersistentVolume" }), async (rest, seen) => {
    const answer = await rest.request({
      method: "PATCH",
      path: "/api/v1/persistentvolumes/pv-1",
      query: { fieldManager: "agent", dryRun: undefined },
      contentType: "application/merge-patch+json",
      body: { metadata: { finalizers: null } },
    });
    deepStrictEqual(answer, { kind: "PersistentVolume" });
    strictEqual(seen[0]?.method, "PATCH");
    strictEqual(seen[0]?.url, "/base/api/v1/persistentvolumes/pv-1?fieldManager=agent");
    strictEqual(seen[0]?.body, '{"metadata":{"finalizers":null}}');
    strictEqual(seen[0]?.headers["content-type"], "application/merge-patch+json");
    strictEqual(seen[0]?.headers["accept"], "application/json");
    strictEqual(seen[0]?.headers["authorization"], "Bearer t0ken");
    strictEqual(seen[0]?.headers["user-agent"], "agent/test");
  });
});

Deno.test("request() rejects a non-2xx answer with KubeApiError and the Status reason", async () => {
  const conflict = () =>
    Response.json({ kind: "Status", reason: "AlreadyExists", message: "exists" }, { status: 409 });
  await withServer(conflict, async (rest) => {
    await rejects(rest.request({ method: "POST", path: "/api/v1/persistentvolumes", body: {} }), {
      name: "KubeApiError",
      status: 409,
      reason: "AlreadyExists",
      message: "exists",
    });
  });
});

Deno.test("stream() delivers the watch's lines as they arrive", async () => {
  const watch = () =>
    new Response(
      new ReadableStream({
        start(controller) {
          const encoder = new TextEncoder();
          for (const chunk of ['{"type":"ADDED"', '}\n{"type":"BOOKMARK"}\n', "\n"]) {
            controller.enqueue(encoder.encode(chunk));
          }
          controller.close();
        },
      }),
    );
  await withServer(watch, async (rest, seen) => {
    const lines: string[] = [];
    await rest.stream({ method: "GET", path: "/api/v1/pods", query: { watch: true } }, {
      signal: new AbortController().signal,
      onLine: (line) => lines.push(line),
      inactivityMs: 5_000,
    });
    deepStrictEqual(lines, ['{"type":"ADDED"}', '{"type":"BOOKMARK"}']);
    strictEqual(seen[0]?.url, "/base/api/v1/pods?watch=true");
  });
});

Deno.test("stream() rejects a refused watch (410 Gone) with KubeApiError", async () => {
  const gone = () => Response.json({ kind: "Status", reason: "Expired" }, { status: 410 });
  await withServer(gone, async (rest) => {
    await rejects(
      rest.stream({ method: "GET", path: "/api/v1/pods" }, {
        signal: new AbortController().signal,
        onLine: () => {},
        inactivityMs: 5_000,
      }),
      (error: unknown) => error instanceof KubeApiError && error.status === 410,
    );
  });
});

Deno.test("requests take a token from the budget; unmetered ones do not, a cancelled wait sends nothing", async () => {
  await withServer(() => new Response(""), async (rest, seen, bucket) => {
    strictEqual(await rest.request({ method: "GET", path: "/a" }), undefined);
    strictEqual(await rest.request({ method: "GET", path: "/b", unmetered: true }), undefined);
    strictEqual(await bucket.take(), true, "the second token of the burst was left");
    const stop = new AbortController();
    const waiting = rest.request({ method: "GET", path: "/c", signal: stop.signal });
    stop.abort();
    await rejects(waiting, /Kubernetes request GET \/c cancelled/);
    deepStrictEqual(seen.map((request) => request.url), ["/base/a", "/base/b"]);
  });
});

Deno.test("answered() resolves at the next answer, a refusal below 500 included; not at a 503", async () => {
  const statuses = [503, 404];
  const answer = () => Response.json({ kind: "Status" }, { status: statuses.shift() ?? 200 });
  await withServer(answer, async (rest) => {
    const resolved = async (promise: Promise<void>) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<boolean>((resolve) => (timer = setTimeout(resolve, 50, false)));
      const answer = await Promise.race([promise.then(() => true), late]);
      clearTimeout(timer);
      return answer;
    };
    const first = rest.answered!();
    await rejects(rest.request({ method: "GET", path: "/api/v1/nodes" }), { status: 503 });
    strictEqual(await resolved(first), false, "a 503 is no sign the server is back");
    await rejects(rest.request({ method: "GET", path: "/api/v1/nodes" }), { status: 404 });
    strictEqual(await resolved(first), true, "a 404 is an answer");
  });
});

/** Answers with each of `answers` in turn, then 200 with an empty body. */
function inTurn(...answers: (() => Response)[]): () => Response {
  return () => answers.shift()?.() ?? new Response("");
}

function refused(status: number, retryAfter?: string): () => Response {
  const headers: Record<string, string> = retryAfter === undefined
    ? {}
    : { "retry-after": retryAfter };
  return () => Response.json({ kind: "Status", reason: "TooManyRequests" }, { status, headers });
}

Deno.test("a 429 with Retry-After is sent again after the wait, taking a new token, as client-go does", async () => {
  const answer = inTurn(refused(429, "0"), () => Response.json({ kind: "PersistentVolume" }));
  await withServer(answer, async (rest, seen, bucket) => {
    const saved = await rest.request({
      method: "POST",
      path: "/api/v1/persistentvolumes",
      body: {},
    });
    deepStrictEqual(saved, { kind: "PersistentVolume" });
    deepStrictEqual(seen.map((request) => request.method), ["POST", "POST"]);
    strictEqual(seen[1]?.body, "{}");
    strictEqual(
      await bucket.take("high", AbortSignal.timeout(50)),
      false,
      "the retry took a token",
    );
  });
});

Deno.test("a refusal without a Retry-After in seconds, or a 4xx other than 429, is not sent again", async () => {
  const cases = [
    refused(429),
    refused(429, "Wed, 21 Oct 2026 07:28:00 GMT"),
    refused(409, "0"),
  ];
  for (const answer of cases) {
    await withServer(answer, async (rest, seen) => {
      const status = answer().status;
      await rejects(rest.request({ method: "GET", path: "/api/v1/nodes" }), { status });
      strictEqual(seen.length, 1);
    });
  }
});

Deno.test("after ten retries the last refusal reaches the caller, with its Retry-After", async () => {
  await withServer(refused(503, "0"), async (rest, seen) => {
    await rejects(rest.request({ method: "GET", path: "/api/v1/nodes", unmetered: true }), {
      status: 503,
      retryAfterSeconds: 0,
    });
    strictEqual(seen.length, 1 + MAX_RETRY_AFTER_RETRIES);
  });
});

Deno.test("the caller's abort ends the wait for Retry-After with the refusal", async () => {
  await withServer(refused(429, "30"), async (rest, seen) => {
    const stop = new AbortController();
    const started = performance.now();
    // The abort comes when the wait begins: a timer could fire before the refusal arrives.
    const request = rest.request({
      method: "GET",
      path: "/api/v1/nodes",
      signal: stop.signal,
      onRetryAfter: () => stop.abort(),
    });
    await rejects(request, { status: 429, retryAfterSeconds: 30 });
    strictEqual(seen.length, 1);
    strictEqual(performance.now() - started < 10_000, true, "did not wait the 30 s");
  });
});

Deno.test("a watch refused with 429 and Retry-After is opened again", async () => {
  const watch = () => new Response('{"type":"ADDED"}\n');
  await withServer(inTurn(refused(429, "0"), watch), async (rest, seen) => {
    const lines: string[] = [];
    const end = await rest.stream({ method: "GET", path: "/api/v1/pods" }, {
      signal: new AbortController().signal,
      onLine: (line) => lines.push(line),
      inactivityMs: 5_000,
    });
    strictEqual(end, "end");
    deepStrictEqual(lines, ['{"type":"ADDED"}']);
    strictEqual(seen.length, 2);
  });
});

Deno.test("onRetryAfter is told of each wait, with the refusal and the wait, for requests and watches", async () => {
  const watch = () => new Response('{"type":"ADDED"}\n');
  await withServer(inTurn(refused(429, "0"), refused(503, "0"), watch), async (rest) => {
    const waits: string[] = [];
    await rest.stream({
      method: "GET",
      path: "/api/v1/pods",
      unmetered: true,
      onRetryAfter: (wait) => waits.push(`${wait.error.status} ${wait.waitMs}`),
    }, { signal: new AbortController().signal, onLine: () => {}, inactivityMs: 5_000 });
    deepStrictEqual(waits, ["429 0", "503 0"]);
  });
  await withServer(inTurn(refused(429, "0"), () => Response.json({})), async (rest) => {
    const waits: number[] = [];
    await rest.request({
      method: "GET",
      path: "/api/v1/nodes",
      onRetryAfter: (wait) => waits.push(wait.error.status),
    });
    deepStrictEqual(waits, [429]);
  });
});
