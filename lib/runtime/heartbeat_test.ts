import { deepStrictEqual } from "node:assert/strict";
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
