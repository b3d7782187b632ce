import { deepStrictEqual } from "node:assert/strict";
import { parseSocketBytes } from "./socket_bytes.ts";

Deno.test("parseSocketBytes() keeps the process's sockets to the port, with bytes_received", () => {
  const output = [
    `ESTAB 0 0 127.0.0.1:50001 127.0.0.1:6443 users:(("agent",pid=42,fd=12))`,
    "\t bbr wscale:10,10 bytes_sent:100 bytes_acked:100 bytes_received:23341 segs_out:5",
    `ESTAB 0 0 127.0.0.1:50002 127.0.0.1:6443 users:(("agent",pid=420,fd=12))`,
    "\t bbr bytes_received:999",
    `ESTAB 0 0 127.0.0.1:50003 127.0.0.1:2379 users:(("agent",pid=42,fd=13))`,
    "\t bbr bytes_received:777",
    `ESTAB 0 0 127.0.0.1:50004 127.0.0.1:6443 users:(("agent",pid=42,fd=14))`,
    "\t bbr bytes_sent:10",
    "",
  ].join("\n");
  deepStrictEqual(
    parseSocketBytes(output, { pid: 42, peerPort: 6443 }),
    new Map([["127.0.0.1:50001", 23341], ["127.0.0.1:50004", 0]]),
  );
});
