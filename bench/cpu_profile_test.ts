import { deepStrictEqual } from "node:assert/strict";
import { cpuBreakdown, type CpuProfile, withModulePaths } from "./cpu_profile.ts";

const frame = (id: number, functionName: string, url: string, children: number[] = []) => ({
  id,
  callFrame: { functionName, url },
  children,
});

Deno.test("cpuBreakdown() gives native frames to their JavaScript caller and skips idle", () => {
  const profile: CpuProfile = {
    nodes: [
      frame(1, "(root)", "", [2, 5, 7]),
      frame(2, "onLine", "file:///app/lib/kube/informer/informer.ts", [3, 4]),
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

Deno.test("cpuBreakdown() finds the transport and the managedFields cut in lib/kube/rest/", () => {
  const profile: CpuProfile = {
    nodes: [
      frame(1, "(root)", "", [2, 3, 4]),
      frame(2, "readLines", "file:///app/lib/kube/rest/fetch.ts"),
      frame(3, "withoutManagedFields", "file:///app/lib/kube/rest/managed_fields.ts"),
      frame(4, "request", "file:///app/lib/kube/rest/client.ts"),
    ],
    samples: [2, 2, 3, 4],
  };
  deepStrictEqual(cpuBreakdown(profile), [
    { category: "fetch transport (Bun's native fetch, its TLS settings)", share: 0.5 },
    { category: "informers: watch lines → trim → filter → enqueue", share: 0.25 },
    { category: "REST client (requests, rate limiter, timeouts)", share: 0.25 },
  ]);
});

Deno.test("withModulePaths() names a compiled binary's frames by the bundled module of their line", () => {
  const bundle = [
    "// @bun @bun-cjs",
    "// node_modules/@grpc/grpc-js/build/src/call.js",
    "function call() {}",
    "// lib/journal/file_journal.ts",
    "// a comment, not a module",
    "function put() {}",
  ].join("\n");
  const nodes = [compiled(1, "f", 2), compiled(2, "f", 5), frame(3, "parse", "[native code]")];
  deepStrictEqual(urlsWithModulePaths(nodes, bundle), [
    "/node_modules/@grpc/grpc-js/build/src/call.js",
    "/lib/journal/file_journal.ts",
    "[native code]",
  ]);
});

Deno.test("withModulePaths() shifts the lines by where the bundle's functions are declared", () => {
  const bundle = [
    "// @bun @bun-cjs",
    "var __commonJS = (cb) => cb;",
    "var __toESM = (mod) => mod;",
    "// node_modules/@grpc/grpc-js/build/src/call.js",
    "function call() {}",
    "// lib/journal/file_journal.ts",
    "function put() {",
    "}",
  ].join("\n");
  // The compiled bundle had one helper line fewer: every line is 1 below.
  const nodes = [compiled(1, "call", 3), compiled(2, "put", 5), compiled(3, "", 1)];
  deepStrictEqual(urlsWithModulePaths(nodes, bundle), [
    "/node_modules/@grpc/grpc-js/build/src/call.js",
    "/lib/journal/file_journal.ts",
    "/bundler helpers",
  ]);
});

/** A frame of a compiled binary: its bundled file, a function name and a line. */
function compiled(id: number, functionName: string, lineNumber: number) {
  return { id, callFrame: { functionName, url: "/$bunfs/root/agent", lineNumber } };
}

/** Each frame's url once withModulePaths() has named it, one sample per frame. */
function urlsWithModulePaths(nodes: CpuProfile["nodes"], bundle: string): string[] {
  const profile = withModulePaths({ nodes, samples: nodes.map((node) => node.id) }, bundle);
  return profile.nodes.map((node) => node.callFrame.url);
}
