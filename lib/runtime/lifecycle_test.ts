import { deepStrictEqual } from "node:assert/strict";
import { createLogger } from "../log/logger.ts";
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
