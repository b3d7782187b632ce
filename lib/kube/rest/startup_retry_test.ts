import { deepStrictEqual, rejects, strictEqual } from "node:assert/strict";
import { capturing } from "../../../tests/fakes/logger.ts";
import { NoAnswerError, RequestTimeoutError } from "./fetch.ts";
import { KubeApiError } from "./types.ts";
import { classifyFailure, startupRetry, WARMING_UP_RETRIES } from "./startup_retry.ts";

const noAnswer = () => new NoAnswerError(new TypeError("Connection refused (os error 111)"));
const status = (code: number) => new KubeApiError(code, "", `HTTP ${code}`);

Deno.test("classifyFailure(): no answer, timeouts, 5xx and 429 are away; other answers are not", () => {
  const wrapped = new Error("look up owner(s) of pod: get object", {
    cause: new Error("get object", { cause: noAnswer() }),
  });
  deepStrictEqual(
    [
      noAnswer(),
      new RequestTimeoutError("request timed out: no response headers", 30_000),
      status(500),
      status(503),
      status(429),
      wrapped,
    ].map(classifyFailure),
    ["away", "away", "away", "away", "away", "away"],
  );
  deepStrictEqual([status(401), status(403)].map(classifyFailure), ["refused", "refused"]);
  deepStrictEqual(
    [status(404), status(400), new Error("has no controlling owner"), new TypeError("x")].map(
      classifyFailure,
    ),
    ["final", "final", "final", "final"],
  );
});

/** Fails with each error in turn, then answers "done". */
function failing(errors: Error[]): { call: () => Promise<string>; calls: () => number } {
  let calls = 0;
  return {
    call: () => {
      const error = errors[calls++];
      return error === undefined ? Promise.resolve("done") : Promise.reject(error);
    },
    calls: () => calls,
  };
}

Deno.test("startupRetry(): retries while away, one log line per try with its delay, and says what it waits for", async () => {
  const { logger, lines } = capturing(2);
  const waits: (string | undefined)[] = [];
  const retry = startupRetry({
    signal: new AbortController().signal,
    logger,
    waiting: (reason) => waits.push(reason),
    backoff: { baseMs: 1, maxMs: 4 },
    random: () => 0,
  });
  const server = failing([noAnswer(), status(503), noAnswer()]);
  strictEqual(await retry("the discovery of storage.k8s.io/v1", server.call), "done");
  strictEqual(server.calls(), 4);
  const retries = lines.filter((line) => line.includes("does not answer a start-up call"));
  deepStrictEqual(retries.map((line) => JSON.parse(line).retryInMs), [1, 2, 4]);
  strictEqual(lines.filter((line) => line.includes("answers again")).length, 1);
  strictEqual(waits.length, 4);
  strictEqual(waits.at(-1), undefined);
  strictEqual(
    waits[2],
    "waiting for the API server to answer the discovery of storage.k8s.io/v1 (3 tries so far; the last: Connection refused (os error 111))",
  );
});

Deno.test("startupRetry(): a definitive answer is thrown at once; a 403 only after being away is the server warming up, a few times", async () => {
  const retry = startupRetry({
    signal: new AbortController().signal,
    logger: capturing(2).logger,
    backoff: { baseMs: 1, maxMs: 1 },
  });
  const forbidden = failing([status(403)]);
  await rejects(retry("a read", forbidden.call), KubeApiError);
  strictEqual(forbidden.calls(), 1);
  const missing = failing([noAnswer(), status(404)]);
  await rejects(retry("a read", missing.call), { status: 404 });
  strictEqual(missing.calls(), 2);
  const warming = failing([noAnswer(), status(403), status(403)]);
  strictEqual(await retry("a read", warming.call), "done");
  const refusing = failing([noAnswer(), ...Array(WARMING_UP_RETRIES + 1).fill(status(403))]);
  await rejects(retry("a read", refusing.call), { status: 403 });
  strictEqual(refusing.calls(), WARMING_UP_RETRIES + 2);
});

Deno.test("startupRetry(): shutdown ends the wait with the last error", async () => {
  const stop = new AbortController();
  const retry = startupRetry({
    signal: stop.signal,
    logger: capturing(2).logger,
    backoff: { baseMs: 60_000, maxMs: 60_000 },
  });
  const waiting = retry("a read", () => Promise.reject(noAnswer()));
  setTimeout(() => stop.abort(), 10);
  await rejects(waiting, NoAnswerError);
});
