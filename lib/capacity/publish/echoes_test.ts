import { strictEqual } from "node:assert/strict";
import { peek, PENDING } from "../../../tests/fakes/async.ts";
import { WriteEchoes } from "./echoes.ts";

const never = new AbortController().signal;

Deno.test("an expected event is an echo; an unexpected one is not", () => {
  const echoes = new WriteEchoes();
  strictEqual(echoes.observe("fast"), false);
  echoes.expect("fast");
  strictEqual(echoes.observe("slow"), false);
  strictEqual(echoes.observe("fast"), true);
  strictEqual(echoes.observe("fast"), false);
});

Deno.test("allArrived() waits for every expected echo, including ones that came first", async () => {
  const echoes = new WriteEchoes();
  echoes.expect("fast");
  echoes.expect("fast");
  echoes.observe("fast"); // the watch can be quicker than the write's response
  const arrived = echoes.allArrived("fast", { timeoutMs: 10_000, signal: never });
  strictEqual(await peek(arrived), PENDING);
  echoes.observe("fast");
  strictEqual(await arrived, true);
  strictEqual(await echoes.allArrived("fast", { timeoutMs: 10_000, signal: never }), true);
});

Deno.test("a cancelled write expects nothing", async () => {
  const echoes = new WriteEchoes();
  echoes.expect("fast");
  echoes.cancel("fast");
  strictEqual(echoes.outstanding("fast"), 0);
  strictEqual(await echoes.allArrived("fast", { timeoutMs: 10_000, signal: never }), true);
});

Deno.test("after a timeout the echo is forgotten: a late event counts as someone else's", async () => {
  const echoes = new WriteEchoes();
  echoes.expect("fast");
  strictEqual(await echoes.allArrived("fast", { timeoutMs: 1, signal: never }), false);
  strictEqual(echoes.outstanding("fast"), 0);
  strictEqual(echoes.observe("fast"), false);
});

Deno.test("an abort ends the wait", async () => {
  const echoes = new WriteEchoes();
  echoes.expect("fast");
  const stop = new AbortController();
  const arrived = echoes.allArrived("fast", { timeoutMs: 10_000, signal: stop.signal });
  stop.abort();
  strictEqual(await arrived, false);
  echoes.expect("fast");
  strictEqual(await echoes.allArrived("fast", { timeoutMs: 10_000, signal: stop.signal }), false);
});
