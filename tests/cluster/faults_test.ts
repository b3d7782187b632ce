/**
 * The control-plane faults other tests build on: kube-apiserver frozen,
 * stopped and started again on the same port with the same certificate, etcd
 * restarted, and the stalling proxy (TLS verified with the cluster's CA,
 * watches picked by their request and held while lists pass).
 */

import assert from "node:assert/strict";
import { startCluster } from "./cluster.ts";
import { isWatch } from "./stall_proxy.ts";
import { kubeconfigToken, tokenFetch } from "./token_fetch.ts";
import { delay, waitFor } from "./wait.ts";

async function status(response: Promise<Response>): Promise<number | string> {
  try {
    const answer = await response;
    await answer.body?.cancel();
    return answer.status;
  } catch (error) {
    return (error as Error).name;
  }
}

Deno.test("kube-apiserver and etcd stop, restart and freeze; the stalling proxy holds watches", async (t) => {
  await using cluster = await startCluster({ nodes: 1, driver: "none" });
  const http = tokenFetch(cluster.caPem, await kubeconfigToken(cluster.kubeconfigPath));
  const proxy = await cluster.startApiProxy();
  try {
    await t.step("the proxy passes requests, TLS verified against the cluster's CA", async () => {
      strictStatus(await status(http.get(proxy.url, "/api/v1/nodes")), 200);
      assert.ok(proxy.requests.some((request) => request.path === "/api/v1/nodes"));
    });

    await t.step("a stall by request holds new watches; lists and older watches pass", async () => {
      const before = await http.get(proxy.url, "/api/v1/namespaces?watch=true");
      strictStatus(before.status, 200);
      const oldEvents = before.body!.getReader();
      const stall = proxy.stall({ request: isWatch });
      const stalled = http.get(proxy.url, "/api/v1/configmaps?watch=true", { timeoutMs: 60_000 });
      await waitFor(() => stall.connections.size === 1, { description: "the new watch held" });
      strictStatus(await status(http.get(proxy.url, "/api/v1/namespaces")), 200);
      await cluster.kubectl(["create", "namespace", "stall-test"]);
      // The watch opened before the stall still streams (its first event: ADDED).
      const first = await oldEvents.read();
      assert.equal(first.done, false);
      await oldEvents.cancel();
      const early = await Promise.race([
        stalled.then(() => "answered"),
        delay(1500).then(() => "held"),
      ]);
      assert.equal(early, "held", "the stalled watch got no answer");
      stall.release();
      const answered = await stalled;
      strictStatus(answered.status, 200);
      await answered.body?.cancel();
    });

    await t.step("a stall of the watches open now silences them; later watches pass", async () => {
      const open = await http.get(proxy.url, "/api/v1/namespaces?watch=true", {
        timeoutMs: 60_000,
      });
      const events = open.body!.getReader();
      await events.read(); // the ADDED events of the namespaces that exist
      const stall = proxy.stall({ request: isWatch, connections: "open" });
      assert.equal(stall.connections.size, 1, "the one watch open now");
      const later = await http.get(proxy.url, "/api/v1/namespaces?watch=true", {
        timeoutMs: 5_000,
      });
      strictStatus(later.status, 200);
      const laterEvents = later.body!.getReader();
      await cluster.kubectl(["create", "namespace", "stall-open"]);
      // The later watch sees the new namespace; the silenced one does not.
      for (;;) {
        const chunk = await laterEvents.read();
        if (new TextDecoder().decode(chunk.value).includes("stall-open")) break;
      }
      // What the silenced watch delivers within a second: what it had before, not the new one.
      let seen = "";
      const reading = (async () => {
        for (;;) {
          const chunk = await events.read();
          if (chunk.done) return;
          seen += new TextDecoder().decode(chunk.value);
        }
      })().catch(() => {});
      await delay(1000);
      const silent = seen.includes("stall-open") ? "data" : "silent";
      assert.equal(silent, "silent");
      stall.release();
      await laterEvents.cancel();
      await events.cancel();
      await reading;
    });

    await t.step(
      "frozen, kube-apiserver accepts but never answers; thawed, it serves",
      async () => {
        cluster.apiserver.freeze();
        assert.equal(cluster.apiserver.frozen, true);
        strictStatus(
          await status(http.get(cluster.server, "/readyz", { timeoutMs: 1500 })),
          "TimeoutError",
        );
        cluster.apiserver.thaw();
        await cluster.apiserver.waitServing();
        strictStatus(await status(http.get(cluster.server, "/api/v1/nodes")), 200);
      },
    );

    await t.step(
      "stopped, it refuses; started, the same URL, token and CA work again",
      async () => {
        const pid = cluster.apiserver.process.pid;
        await cluster.apiserver.stop();
        assert.equal(cluster.apiserver.running, false);
        strictStatus(
          await status(http.get(cluster.server, "/readyz", { timeoutMs: 2000 })),
          "TypeError",
        );
        await cluster.apiserver.start();
        assert.notEqual(cluster.apiserver.process.pid, pid);
        strictStatus(await status(http.get(cluster.server, "/api/v1/nodes")), 200);
        strictStatus(await status(http.get(proxy.url, "/api/v1/nodes")), 200);
        const log = await Deno.readTextFile(cluster.apiserver.process.logFile);
        assert.match(log, /===== cluster: start #2/);
      },
    );

    await t.step("etcd restarted on its data dir: the objects are still there", async () => {
      await cluster.etcd.restart();
      await waitFor(
        async () =>
          (await status(http.get(cluster.server, "/api/v1/namespaces/stall-test"))) === 200,
        { description: "the namespace read through a restarted etcd", timeoutMs: 60_000 },
      );
    });
  } finally {
    http.close();
  }
});

function strictStatus(actual: number | string, expected: number | string): void {
  assert.equal(actual, expected);
}
