/**
 * What the soak scenario reads of a running agent from outside, the same way
 * for a Bun and a Go process: open file descriptors and threads from /proc,
 * and its connections to its CSI driver's unix socket.
 *
 * A connected client socket has no path of its own (the kernel lists it
 * unnamed in /proc/net/unix, and /proc/net/unix shows no peer), so the agent's
 * end cannot be told apart from any other unnamed socket by /proc alone. `ss
 * -x` (iproute2) lists each unix socket's inode with its peer's inode; the
 * driver's accepted end carries the socket's path. So: the agent's socket
 * inodes (its /proc/<pid>/fd links) whose peer is an inode bound to the driver's path.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/** One unix socket as `ss -xn` lists it. */
export interface UnixSocketEntry {
  /** The bound path (an accepted socket shows its listener's); undefined when unnamed ("*"). */
  path: string | undefined;
  inode: number;
  /** The peer's inode; 0 or undefined when not connected. */
  peer: number | undefined;
}

/**
 * Parses `ss -xn` output: "Netid State Recv-Q Send-Q Local-Address Port
 * Peer-Address Port", the header line skipped. Paths with spaces are not
 * expected (the harness's socket paths have none) and such lines are skipped.
 */
export function parseSsUnix(output: string): UnixSocketEntry[] {
  const entries: UnixSocketEntry[] = [];
  for (const line of output.split("\n")) {
    const fields = line.trim().split(/\s+/);
    if (fields.length !== 8 || !fields[0]?.startsWith("u_")) continue;
    const inode = Number(fields[5]);
    if (!Number.isInteger(inode)) continue;
    const local = fields[4];
    const peer = Number(fields[7]);
    entries.push({
      path: local === "*" ? undefined : local,
      inode,
      peer: Number.isInteger(peer) && peer > 0 ? peer : undefined,
    });
  }
  return entries;
}

/** How many of `ownInodes` are connected to a socket bound to `socketPath`. */
export function connectionsTo(
  entries: readonly UnixSocketEntry[],
  options: { ownInodes: ReadonlySet<number>; socketPath: string },
): number {
  const serverEnds = new Set(
    entries.filter((entry) => entry.path === options.socketPath).map((entry) => entry.inode),
  );
  return entries.filter((entry) =>
    options.ownInodes.has(entry.inode) && entry.peer !== undefined && serverEnds.has(entry.peer)
  ).length;
}

/** The inodes of the process's sockets, from its fd links ("socket:[12345]"). */
export function socketInodes(pid: number): Set<number> {
  const inodes = new Set<number>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let target: string;
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue; // closed between the listing and the link read
    }
    const match = /^socket:\[(\d+)\]$/.exec(target);
    if (match) inodes.add(Number(match[1]));
  }
  return inodes;
}

/** Open file descriptors: the entries of /proc/<pid>/fd. */
export function openFdCount(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

/** Threads of the process (/proc/<pid>/status "Threads:"). */
export function threadCount(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const match = /^Threads:\s+(\d+)$/m.exec(status);
  if (match === null) throw new Error(`no Threads for pid ${pid}`);
  return Number(match[1]);
}

/** The agent's connections to the driver socket at `socketPath` (see the module comment). */
export async function csiConnectionCount(pid: number, socketPath: string): Promise<number> {
  const ownInodes = socketInodes(pid);
  const { code, stdout, stderr } = await new Deno.Command("ss", { args: ["-xn"] }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  if (code !== 0) throw new Error(`ss -xn failed (${code}): ${decode(stderr)}`);
  return connectionsTo(parseSsUnix(decode(stdout)), { ownInodes, socketPath });
}
