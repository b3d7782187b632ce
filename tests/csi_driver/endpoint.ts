/**
 * Unix socket endpoints: "unix:///abs/path", "unix:relative/path" or a bare
 * path, all resolved to an absolute file path.
 */
import * as fs from "node:fs";
import * as path from "node:path";

/** sockaddr_un.sun_path holds 108 bytes including the terminating NUL on Linux. */
const MAX_SOCKET_PATH_BYTES = 107;

export type SocketPath = { ok: true; path: string } | { ok: false; problem: string };

/** Resolves an endpoint to an absolute socket path, or says why it cannot be one. */
export function socketPathOf(endpoint: string): SocketPath {
  let file = endpoint;
  if (endpoint.startsWith("unix://")) file = endpoint.slice("unix://".length);
  else if (endpoint.startsWith("unix:")) file = endpoint.slice("unix:".length);
  else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(endpoint)) {
    return { ok: false, problem: `endpoint "${endpoint}" is not a unix socket (unix:///path)` };
  }
  if (file === "") return { ok: false, problem: `endpoint "${endpoint}" names no socket file` };
  const absolute = path.resolve(file);
  if (new TextEncoder().encode(absolute).length > MAX_SOCKET_PATH_BYTES) {
    return {
      ok: false,
      problem: `socket path "${absolute}" is longer than ${MAX_SOCKET_PATH_BYTES} bytes`,
    };
  }
  return { ok: true, path: absolute };
}

/** Like socketPathOf, for callers whose input was validated already. */
export function requireSocketPath(endpoint: string): string {
  const resolved = socketPathOf(endpoint);
  if (!resolved.ok) throw new Error(resolved.problem);
  return resolved.path;
}

/** The gRPC target for a socket path. */
export function grpcTarget(socketPath: string): string {
  return `unix://${socketPath}`;
}

/**
 * Makes room for a new listener: creates the directory and removes a socket
 * left by a process that died, but refuses to delete anything that is not a socket.
 */
export function prepareSocketPath(socketPath: string): void {
  fs.mkdirSync(path.dirname(socketPath), { recursive: true });
  const existing = fs.lstatSync(socketPath, { throwIfNoEntry: false });
  if (existing === undefined) return;
  if (!existing.isSocket()) {
    throw new Error(`${socketPath} exists and is not a socket; refusing to replace it`);
  }
  fs.rmSync(socketPath, { force: true });
}

/** Removes a socket file if it is still there. */
export function removeSocketFile(socketPath: string): void {
  const existing = fs.lstatSync(socketPath, { throwIfNoEntry: false });
  if (existing?.isSocket() === true) fs.rmSync(socketPath, { force: true });
}
