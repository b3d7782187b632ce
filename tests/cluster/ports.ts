/**
 * Free loopback TCP ports. The kernel picks one for a listener on port 0; the
 * listener is closed and the port handed to a component. Another program may
 * grab it in between, so starters retry with fresh ports when a component
 * reports "address already in use" (see isAddressInUse).
 */

/** Ports handed out by this process, never handed out twice. */
const handedOut = new Set<number>();

export function freeLoopbackPort(): number {
  for (let attempt = 0; attempt < 20; attempt++) {
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (listener.addr as Deno.NetAddr).port;
    listener.close();
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error("no free loopback port found in 20 attempts");
}

/** Whether a component's log says its port was taken by someone else. */
export function isAddressInUse(logText: string): boolean {
  return /address already in use/i.test(logText);
}
