import { deepStrictEqual } from "node:assert/strict";
import { Lifecycle } from "./lifecycle.ts";
import { quiet } from "../../tests/fakes/logger.ts";

Deno.test("Lifecycle remembers a loop that ended before any stop, not one that ended on it", async () => {
  const life = new Lifecycle(quiet);
  let finish: () => void = () => {};
  life.track(new Promise<void>((resolve) => (finish = resolve)), { name: "claim workers" });
  life.track(Promise.reject(new Error("bug")), { name: "volume workers" });
  life.track(
    new Promise<void>((resolve) => life.shutdown.signal.addEventListener("abort", () => resolve())),
    { name: "informer" },
  );
  await new Promise((resolve) => setTimeout(resolve, 0));
  deepStrictEqual(life.loops(), { running: 2, ended: ["volume workers"] });
  finish();
  await new Promise((resolve) => setTimeout(resolve, 0));
  deepStrictEqual(life.loops(), { running: 1, ended: ["volume workers", "claim workers"] });
  await life.close();
  deepStrictEqual(life.loops(), { running: 0, ended: ["volume workers", "claim workers"] });
});

Deno.test("Lifecycle does not count a once task that ended, and awaits it on the way out", async () => {
  const life = new Lifecycle(quiet);
  let finish: () => void = () => {};
  life.track(Promise.resolve(), { name: "volume check", once: true });
  life.track(new Promise<void>((resolve) => (finish = resolve)), {
    name: "start-up check",
    once: true,
  });
  await new Promise((resolve) => setTimeout(resolve, 0));
  deepStrictEqual(life.loops(), { running: 1, ended: [] });
  const closed = life.close();
  finish();
  await closed;
  deepStrictEqual(life.loops(), { running: 0, ended: [] });
});
