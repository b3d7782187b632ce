import { deepStrictEqual, ok } from "node:assert/strict";
import { capturing } from "../../tests/fakes/logger.ts";
import { waitFor } from "../../tests/cluster/wait.ts";
import { renewLease } from "./renew.ts";

Deno.test("renewLease: renews each period; a failure is retried sooner and logged once", async () => {
  const stop = new AbortController();
  const outcomes = ["fail", "fail", "ok", "ok"];
  const calls: number[] = [];
  const { logger, lines } = capturing(2);
  const lease = {
    renew: (nowMs: number) => {
      calls.push(nowMs);
      const outcome = outcomes.shift() ?? "ok";
      return outcome === "ok" ? Promise.resolve() : Promise.reject(new Error("refused"));
    },
  };
  const started = Date.now();
  const loop = renewLease({ lease, logger, renewMs: 200, firstRetryMs: 20 }, stop.signal);
  await waitFor(() => calls.length >= 4, { description: "four renewals", timeoutMs: 5000 });
  stop.abort();
  await loop;
  const gaps = calls.slice(1).map((at, index) => at - calls[index]!);
  ok(gaps[0]! < 100 && gaps[1]! < 100, `retries sooner, 20 then 40 ms: ${gaps}`);
  ok(gaps[2]! >= 195, `then one period: ${gaps}`);
  ok(calls[0]! - started < 50, "the first at once");
  const warnings = lines.filter((line) => line.includes("Cannot renew this agent's Lease"));
  const recovered = lines.filter((line) => line.includes("Renewed this agent's Lease again"));
  deepStrictEqual([warnings.length, recovered.length], [1, 1]);
});
