import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { quiet } from "../../tests/fakes/logger.ts";
import type { CacheChange } from "../kube/informer/informer.ts";
import type { AgentLease } from "../model/lease.ts";
import type { LeaseInformer } from "./ports.ts";
import { LeaseWatch } from "./watch.ts";

const noLeases = { list: () => Promise.resolve([]) };

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
    { open: () => fakeInformer("a", runs), lister: noLeases, now: () => 0, logger: quiet },
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

Deno.test("LeaseWatch: while not watching, the probes say which watchers are gone", async () => {
  let now = 0;
  let renewTime = "t0";
  const lists: string[][] = [];
  const lister = {
    list: (publishers: readonly string[]) => {
      lists.push([...publishers]);
      const lease: AgentLease = {
        name: "lease-w1",
        resourceVersion: renewTime,
        node: "w1",
        publisher: "p-w1",
        renewTime,
        durationMs: 60_000,
      };
      return Promise.resolve(publishers.includes("p-w1") ? [lease] : []);
    },
  };
  const watch = new LeaseWatch(
    { open: () => fakeInformer("a", []), lister, now: () => now, logger: quiet },
    new AbortController().signal,
  );
  const signal = new AbortController().signal;
  const asked = ["p-w1", "p-w2"];
  await watch.probe(asked, signal);
  deepStrictEqual([...watch.gone(asked, now)], [], "nothing known yet");
  now = 10_000;
  await watch.probe(asked, signal);
  strictEqual(lists.length, 1, "at most one read per renewal period");
  for (const at of [30_000, 60_000]) {
    now = at;
    renewTime = `t${at}`;
    await watch.probe(asked, signal);
  }
  deepStrictEqual([...watch.gone(asked, now)], ["p-w2"], "w1 renews; w2 has had no Lease for 60 s");
  now = 200_000;
  deepStrictEqual([...watch.gone(asked, now)], ["p-w1", "p-w2"], "w1 stopped renewing");
});
