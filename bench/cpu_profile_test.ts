import { deepStrictEqual } from "node:assert/strict";
import { cpuBreakdown, type CpuProfile } from "./cpu_profile.ts";

const frame = (id: number, functionName: string, url: string, children: number[] = []) => ({
  id,
  callFrame: { functionName, url },
  children,
});

Deno.test("cpuBreakdown() gives native frames to their JavaScript caller and skips idle", () => {
  const profile: CpuProfile = {
    nodes: [
      frame(1, "(root)", "", [2, 5, 7]),
      frame(2, "onLine", "file:///app/lib/kube/informer.ts", [3, 4]),
      frame(3, "parse", "[native code]"),
      frame(4, "execute", "[native code]"),
      frame(5, "socketOnData", "node:_http_client", [6]),
      frame(6, "write", "[native code]"),
      frame(7, "(idle)", ""),
    ],
    samples: [3, 3, 4, 6, 6, 6, 7, 7, 7, 7],
  };
  deepStrictEqual(cpuBreakdown(profile), [
    {
      category: "HTTP/1.1 client, TLS and sockets (node:http, node:https, node:net, streams)",
      share: 0.5,
    },
    { category: "JSON.parse (API responses, watch events)", share: 2 / 6 },
    { category: "informers: watch lines → trim → filter → enqueue", share: 1 / 6 },
  ]);
});
