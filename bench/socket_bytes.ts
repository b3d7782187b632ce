/**
 * Bytes a process received from one server port on the wire (TLS records,
 * after any gzip the server applied), from the kernel's per-socket counters
 * as `ss -tinp` prints them (tcp_info bytes_received). A socket's counter
 * vanishes when it closes, so the sockets are sampled every interval and each
 * one's largest value is kept: a connection that closes loses at most the
 * bytes of its last interval.
 */
import { delay } from "../tests/cluster/wait.ts";

/** bytes_received of each socket of `pid` connected to `peerPort`, keyed by local address. */
export function parseSocketBytes(
  ssOutput: string,
  target: { pid: number; peerPort: number },
): Map<string, number> {
  const result = new Map<string, number>();
  const lines = ssOutput.split("\n");
  for (let index = 0; index < lines.length - 1; index++) {
    const header = lines[index]!;
    if (!header.includes(`pid=${target.pid},`)) continue;
    const columns = header.trim().split(/\s+/);
    // State, Recv-Q, Send-Q, local address:port, peer address:port, process
    const [local, peer] = [columns[3], columns[4]];
    if (local === undefined || !peer?.endsWith(`:${target.peerPort}`)) continue;
    const received = /bytes_received:(\d+)/.exec(lines[index + 1]!);
    result.set(local, received === null ? 0 : Number(received[1]));
  }
  return result;
}

/** Samples `ss` until stopped; `stop()` resolves to the bytes received over all sockets seen. */
export function sampleSocketBytes(
  target: { pid: number; peerPort: number },
  options: { intervalMs: number },
): { stop(): Promise<number> } {
  const largest = new Map<string, number>();
  let running = true;
  const loop = (async () => {
    while (running) {
      const output = await new Deno.Command("ss", { args: ["-tinpH"], stdout: "piped" }).output();
      const sockets = parseSocketBytes(new TextDecoder().decode(output.stdout), target);
      for (const [socket, bytes] of sockets) {
        largest.set(socket, Math.max(bytes, largest.get(socket) ?? 0));
      }
      await delay(options.intervalMs);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return [...largest.values()].reduce((sum, bytes) => sum + bytes, 0);
    },
  };
}
