import { deepStrictEqual } from "node:assert/strict";
import { peek, PENDING } from "../../tests/fakes/async.ts";
import { Heartbeat } from "./heartbeat.ts";

Deno.test("Heartbeat measures its age and the lateness of its beats over a window", () => {
  let clock = 0;
  const heartbeat = new Heartbeat({ intervalMs: 1000, windowBeats: 3, now: () => clock });
  clock = 1000;
  heartbeat.beat();
  clock = 2250; // 250 ms late: the loop was busy
  heartbeat.beat();
  clock = 3250;
  heartbeat.beat();
  deepStrictEqual(heartbeat.status(), { ageMs: 0, maxLagMs: 250 });
  clock = 4250;
  heartbeat.beat();
  clock = 5250;
  heartbeat.beat();
  deepStrictEqual(heartbeat.status(), { ageMs: 0, maxLagMs: 0 }, "the late beat left the window");
  clock = 17_250; // no beat for 12 s: timers no longer run
  deepStrictEqual(heartbeat.status(), { ageMs: 12_000, maxLagMs: 0 });
});

Deno.test("Heartbeat.start() beats on a timer until the signal aborts", async () => {
  const heartbeat = new Heartbeat({ intervalMs: 10 });
  const stop = new AbortController();
  heartbeat.start(stop.signal);
  await new Promise((resolve) => setTimeout(resolve, 60));
  const { ageMs } = heartbeat.status();
  stop.abort();
  deepStrictEqual(ageMs < 40, true);
});

Deno.test("Heartbeat.nextBeat() wakes every waiting loop at the next beat, and only then", async () => {
  const heartbeat = new Heartbeat({ now: () => 0 });
  const stop = new AbortController();
  const first = heartbeat.nextBeat(stop.signal);
  const second = heartbeat.nextBeat(stop.signal);
  deepStrictEqual(await peek(first), PENDING, "no beat yet");
  heartbeat.beat();
  deepStrictEqual([await first, await second], [true, true]);
  const third = heartbeat.nextBeat(stop.signal);
  deepStrictEqual(await peek(third), PENDING, "a beat wakes those waiting then, not later ones");
  heartbeat.beat();
  deepStrictEqual(await third, true);
});

Deno.test("Heartbeat.nextBeat() answers false once its signal aborts, and a later beat does not wake it", async () => {
  const heartbeat = new Heartbeat({ now: () => 0 });
  deepStrictEqual(await heartbeat.nextBeat(AbortSignal.abort()), false, "already aborted");
  const stop = new AbortController();
  const waiting = heartbeat.nextBeat(stop.signal);
  const other = heartbeat.nextBeat(new AbortController().signal);
  stop.abort();
  deepStrictEqual(await waiting, false);
  heartbeat.beat();
  deepStrictEqual(await other, true, "another loop's abort does not end this one's wait");
});
