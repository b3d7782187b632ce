import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { connectionsTo, openFdCount, parseSsUnix, socketInodes, threadCount } from "./soak_proc.ts";

// Shaped like `ss -xn` on Debian 12 (iproute2 6.1) with an agent (inodes 101, 103) connected
// twice to node-a's driver (its accepted ends 102, 104) and once elsewhere (105 → 106).
const SS_OUTPUT = [
  "Netid State  Recv-Q Send-Q Local Address:Port       Peer Address:Port Process",
  "u_str LISTEN 0      4096   /c/nodes/node-a/csi.sock 100            * 0",
  "u_str ESTAB  0      0      /c/nodes/node-a/csi.sock 102            * 101",
  "u_str ESTAB  0      0                             * 101            * 102",
  "u_str ESTAB  0      0      /c/nodes/node-a/csi.sock 104            * 103",
  "u_str ESTAB  0      0                             * 103            * 104",
  "u_str ESTAB  0      0      /c/nodes/node-z/csi.sock 106            * 105",
  "u_str ESTAB  0      0                             * 105            * 106",
  "u_dgr UNCONN 0      0                             * 107            * 0",
  "",
].join("\n");

Deno.test("parseSsUnix() reads path, inode and peer, unnamed and unconnected as undefined", () => {
  const entries = parseSsUnix(SS_OUTPUT);
  strictEqual(entries.length, 8);
  deepStrictEqual(entries[0], { path: "/c/nodes/node-a/csi.sock", inode: 100, peer: undefined });
  deepStrictEqual(entries[2], { path: undefined, inode: 101, peer: 102 });
});

Deno.test("connectionsTo() counts the process's sockets whose peer is bound to the path", () => {
  const entries = parseSsUnix(SS_OUTPUT);
  const count = (own: number[], socketPath: string) =>
    connectionsTo(entries, { ownInodes: new Set(own), socketPath });
  strictEqual(count([101, 103, 105, 107], "/c/nodes/node-a/csi.sock"), 2);
  strictEqual(count([101, 103, 105, 107], "/c/nodes/node-z/csi.sock"), 1);
  // The driver's own accepted ends are bound to the path, not connected to it.
  strictEqual(count([102, 104], "/c/nodes/node-a/csi.sock"), 0);
});

Deno.test("the /proc readers see this process's fds, sockets and threads", () => {
  const before = openFdCount(Deno.pid);
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    strictEqual(openFdCount(Deno.pid) > before, true);
    const inodes = socketInodes(Deno.pid);
    strictEqual(inodes.size > 0, true);
  } finally {
    listener.close();
  }
  strictEqual(threadCount(Deno.pid) >= 1, true);
});
