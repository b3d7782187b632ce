import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { quiet } from "../../tests/fakes/logger.ts";
import type { CacheChange } from "../kube/informer/informer.ts";
import type { AgentLease } from "../model/lease.ts";
import type { LeaseInformer } from "./ports.ts";
import { LeaseWatch } from "./watch.ts";

/** An informer that delivers one Lease when run and ends when stopped. */
function fakeInformer(node: string, runs: AbortSignal[]): LeaseInformer {
  const handlers: ((change: CacheChange<AgentLease>) => void)[] = [];
  let synced = false;
  return {
    onChange: (handler) => void handlers.push(handler),
    hasSynced: () => synced,
    run: (signal) => {
      runs.push(signal);
      const lease: AgentLease = {
        name: `lease-${node}`,
        resourceVersion: "1",
        node,
        publisher: `external-provisioner-${node}`,
        renewTime: "t",
        durationMs: 60_000,
      };
      for (const handler of handlers) handler({ key: lease.name, old: undefined, new: lease });
      synced = true;
      return new Promise((resolve) => signal.addEventListener("abort", () => resolve()));
    },
  };
}

Deno.test("LeaseWatch: runs the informer only while asked, with a fresh view each time", () => {
  const shutdown = new AbortController();
  const runs: AbortSignal[] = [];
  const watch = new LeaseWatch(
    { open: () => fakeInformer("a", runs), now: () => 0, logger: quiet },
    shutdown.signal,
  );
  strictEqual(watch.hasSynced(), false);
  deepStrictEqual(watch.agents(), []);
  watch.watch(true);
  watch.watch(true);
  strictEqual(runs.length, 1, "one informer at a time");
  strictEqual(watch.hasSynced(), true);
  deepStrictEqual(watch.agents().map((agent) => agent.node), ["a"]);
  watch.watch(false);
  strictEqual(runs[0]!.aborted, true);
  deepStrictEqual([watch.hasSynced(), watch.agents()], [false, []]);
  watch.watch(true);
  strictEqual(runs.length, 2);
  shutdown.abort();
  strictEqual(runs[1]!.aborted, true, "the soft stop ends it");
  watch.watch(false);
  watch.watch(true);
  strictEqual(runs.length, 2, "never started after the soft stop");
});
