/**
 * An informer whose watch the REST client holds in Retry-After waits (a real
 * HTTP server answers 429 with Retry-After, the client the binary ships
 * waits it out): readiness counts it as failing after the same window as
 * any other failure, and says why; before, the informer looked healthy for
 * as long as the waits lasted (up to ten minutes).
 */
import { ok, strictEqual } from "node:assert/strict";
import { TokenBucket } from "../../queue/token_bucket.ts";
import type { KubeCredentials } from "../rest/credentials.ts";
import { Informer } from "./informer.ts";
import { InformerHealthSet } from "./health.ts";
import { createKubeRest } from "../rest/client.ts";
import { quiet } from "../../../tests/fakes/logger.ts";
import { waitFor } from "../../../tests/cluster/wait.ts";

const WINDOW_MS = 30_000;

Deno.test("a watch held by Retry-After waits counts as failing for readiness, after the usual window", async () => {
  let watches = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    if (!new URL(req.url).searchParams.has("watch")) {
      return Response.json({ metadata: { resourceVersion: "7" }, items: [] });
    }
    watches++;
    return Response.json({ kind: "Status", reason: "TooManyRequests", message: "slow down\n" }, {
      status: 429,
      headers: { "retry-after": "30" },
    });
  });
  const credentials: KubeCredentials = {
    server: new URL(`http://127.0.0.1:${server.addr.port}/`),
    tls: {},
    headers: () => Promise.resolve({}),
  };
  const rest = createKubeRest(credentials, {
    budget: new TokenBucket({ qps: 100, burst: 100 }),
    userAgent: "agent/test",
  });
  const informer = new Informer<string>(rest, {
    resource: "things",
    path: "/api/v1/things",
    trim: (raw) => raw.metadata.name,
    resourceVersionOf: () => "",
    logger: quiet,
  });
  const health = new InformerHealthSet();
  health.add(informer);
  const stop = new AbortController();
  const running = informer.run(stop.signal);
  try {
    await waitFor(() => watches > 0, { description: "a watch", timeoutMs: 2000, intervalMs: 10 });
    strictEqual(watches, 1, "the watch was refused once and is being waited out");
    const now = Date.now();
    strictEqual(health.readiness(now, WINDOW_MS), true, "within the window: still ready");
    const pastWindow = () => health.readiness(now + WINDOW_MS + 1_000, WINDOW_MS);
    // The refusal may still be on its way to the client: give it a moment.
    await waitFor(() => pastWindow() !== true, {
      description: "not ready past the window",
      timeoutMs: 1000,
      intervalMs: 10,
    });
    const later = pastWindow();
    ok(typeof later === "string", "held past the window, the informer still counted as ready");
    ok(later.startsWith("things cannot list or watch for "), later);
    ok(later.includes("429 slow down: waiting 30 s as its Retry-After asks"), later);
  } finally {
    stop.abort();
    await running;
    rest.close();
    await server.shutdown();
  }
});
