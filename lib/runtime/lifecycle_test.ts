import { deepStrictEqual } from "node:assert/strict";
import { createLogger } from "../log/logger.ts";
import { peek, PENDING } from "../../tests/fakes/async.ts";
import { Lifecycle } from "./lifecycle.ts";

const quiet = createLogger({ verbosity: 0, sink: { write: () => {} } });

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

Deno.test("Lifecycle lets a one-shot task end on its own, and awaits it on the way out", async () => {
  const life = new Lifecycle(quiet);
  life.track(Promise.resolve(), { name: "shrink after start-up", oneShot: true });
  life.track(Promise.reject(new Error("no shrink")), { name: "a failed task", oneShot: true });
  let finish: () => void = () => {};
  life.track(new Promise<void>((resolve) => (finish = resolve)), { name: "late", oneShot: true });
  await new Promise((resolve) => setTimeout(resolve, 0));
  deepStrictEqual(life.loops(), { running: 1, ended: [] });
  const closed = life.close();
  deepStrictEqual(await peek(closed), PENDING, "close() waits for the task");
  finish();
  await closed;
  deepStrictEqual(life.loops(), { running: 0, ended: [] });
});
