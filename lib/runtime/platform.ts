/**
 * The only file that touches runtime globals (Deno.*, Bun.*): serving HTTP,
 * fetch with a cluster's TLS settings, and a full garbage collection.
 * Everything else the agent needs from the host comes from `node:` built-ins,
 * which both runtimes provide.
 */
import { memoryUsage } from "node:process";

/** A running HTTP listener. */
export interface HttpListener {
  /** The port actually bound (useful with port 0). */
  port: number;
  /** Stops accepting connections and closes the listener. */
  close(): Promise<void>;
}

type FetchHandler = (request: Request) => Response | Promise<Response>;

interface DenoLike {
  serve(
    options: { hostname: string; port: number; onListen?: (addr: { port: number }) => void },
    handler: FetchHandler,
  ): { addr: { port: number }; shutdown(): Promise<void> };
}

interface BunLike {
  serve(options: { hostname: string; port: number; fetch: FetchHandler }): {
    port: number;
    stop(closeActiveConnections?: boolean): Promise<void> | void;
  };
}

/** Which runtime runs this process. */
export function runtimeName(): "deno" | "bun" | "other" {
  const global = globalThis as { Deno?: unknown; Bun?: unknown };
  if (global.Bun !== undefined) return "bun";
  if (global.Deno !== undefined) return "deno";
  return "other";
}

/**
 * A synchronous full garbage collection of the runtime's heap, or undefined
 * where the runtime offers none: Bun (the shipped binary) always has
 * Bun.gc(true); Deno only with --v8-flags=--expose-gc, which development
 * runs do not pass.
 */
export function fullCollection(): (() => void) | undefined {
  const global = globalThis as { Bun?: { gc(force: boolean): void }; gc?: () => void };
  const bun = global.Bun;
  if (bun !== undefined) return () => bun.gc(true);
  const gc = global.gc;
  return typeof gc === "function" ? () => gc() : undefined;
}

/**
 * The bytes the runtime's heap holds now, objects live or not yet
 * collected: `heapUsed` of node:process's memoryUsage(), which both
 * runtimes provide (Bun reads JavaScriptCore's heap size).
 */
export function heapUsedBytes(): number {
  return memoryUsage().heapUsed;
}

/**
 * A shrink of the whole footprint, or undefined where the runtime offers
 * none: Bun.shrink() collects the heap in full, discards JIT-compiled code
 * and returns the native allocator's free pages to the kernel
 * (JavaScriptCore's VM::shrinkFootprintWhenIdle, runtime/VM.cpp). It does so
 * through VM::whenIdle, once the JavaScript on the stack has returned: the
 * call itself returns at once, before any of that work, which is done by the
 * event loop's next turn (the heap is unchanged when the call returns).
 */
export function footprintShrink(): (() => void) | undefined {
  const bun = (globalThis as { Bun?: { shrink(): void } }).Bun;
  return bun === undefined ? undefined : () => bun.shrink();
}

/** Splits "host:port", ":port" or "[v6]:port"; an empty host listens on every interface. */
export function splitHostPort(endpoint: string): { hostname: string; port: number } {
  const at = endpoint.lastIndexOf(":");
  const host = endpoint.slice(0, at).replace(/^\[(.*)\]$/, "$1");
  return { hostname: host === "" ? "0.0.0.0" : host, port: Number(endpoint.slice(at + 1)) };
}

/** Serves `handler` on `endpoint` with the runtime's native HTTP server. */
export function serveHttp(endpoint: string, handler: FetchHandler): HttpListener {
  const { hostname, port } = splitHostPort(endpoint);
  const global = globalThis as { Deno?: DenoLike; Bun?: BunLike };
  if (global.Bun !== undefined) {
    const server = global.Bun.serve({ hostname, port, fetch: handler });
    return { port: server.port, close: async () => await server.stop(true) };
  }
  if (global.Deno !== undefined) {
    const server = global.Deno.serve({ hostname, port, onListen: () => {} }, handler);
    return { port: server.addr.port, close: () => server.shutdown() };
  }
  throw new Error("no HTTP server: run under Deno or Bun");
}

/** fetch() with the TLS settings bound. */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

/** TLS settings of one API server, as a kubeconfig or the ServiceAccount gives them. */
export interface TlsSettings {
  /** PEM text or buffers. */
  ca?: string | Uint8Array | undefined;
  cert?: string | Uint8Array | undefined;
  key?: string | Uint8Array | undefined;
  /** false: insecure-skip-tls-verify. */
  rejectUnauthorized?: boolean | undefined;
  /** tls-server-name: the name the server's certificate is checked against. */
  servername?: string | undefined;
}

/** fetch() bound to one API server's TLS settings, and the release of what it holds. */
export interface TlsFetch {
  fetch: FetchLike;
  close(): void;
}

interface DenoHttp {
  createHttpClient(options: {
    caCerts?: string[];
    cert?: string;
    key?: string;
    http2?: boolean;
  }): { close(): void };
}

/**
 * The runtime's native fetch with these TLS settings: the only part of the
 * REST client that differs between runtimes. Bun (the shipped binary) takes
 * them as fetch's `tls` option; Deno (development and unit tests) as an
 * HTTP client made by Deno.createHttpClient, kept to HTTP/1.1 so that every
 * watch has a connection of its own instead of a stream of one shared HTTP/2
 * connection.
 *
 * Deno's client cannot skip certificate verification nor check another
 * server name, so under Deno a kubeconfig with insecure-skip-tls-verify or
 * tls-server-name is refused with a clear error. That costs nothing in
 * production: the binary runs under Bun, which honours both.
 */
export function tlsFetch(tls: TlsSettings): TlsFetch {
  const global = globalThis as { Deno?: DenoHttp; Bun?: unknown };
  if (global.Bun !== undefined) {
    const options = {
      ...(tls.ca === undefined ? {} : { ca: tls.ca }),
      ...(tls.cert === undefined ? {} : { cert: tls.cert }),
      ...(tls.key === undefined ? {} : { key: tls.key }),
      ...(tls.servername === undefined ? {} : { serverName: tls.servername }),
      rejectUnauthorized: tls.rejectUnauthorized !== false,
    };
    return {
      fetch: (url, init) => fetch(url, { ...init, tls: options } as RequestInit),
      close: () => {},
    };
  }
  if (global.Deno !== undefined) return denoFetch(global.Deno, tls);
  throw new Error("no TLS-capable fetch: run under Deno or Bun");
}

function denoFetch(deno: DenoHttp, tls: TlsSettings): TlsFetch {
  if (tls.rejectUnauthorized === false || tls.servername !== undefined) {
    throw new Error(
      "insecure-skip-tls-verify and tls-server-name are not supported under Deno (the development runtime); the compiled binary (Bun) supports both",
    );
  }
  const pem = (value: string | Uint8Array) =>
    typeof value === "string" ? value : new TextDecoder().decode(value);
  const client = deno.createHttpClient({
    ...(tls.ca === undefined ? {} : { caCerts: [pem(tls.ca)] }),
    ...(tls.cert === undefined ? {} : { cert: pem(tls.cert) }),
    ...(tls.key === undefined ? {} : { key: pem(tls.key) }),
    http2: false,
  });
  return {
    fetch: (url, init) => fetch(url, { ...init, client } as RequestInit),
    close: () => client.close(),
  };
}

/** An exclusive flock(2) held on an open file; released on release() or when the process ends. */
export interface FileLock {
  release(): void;
}

interface LibcLock {
  open(path: Uint8Array, flags: number): number;
  flock(fd: number, operation: number): number;
  close(fd: number): number;
}

const O_RDONLY_CLOEXEC = 0o2000000;
const LOCK_EX_NB = 2 | 4;
let libc: Promise<LibcLock> | undefined;

/**
 * libc's open, flock and close through the runtime's FFI: neither runtime
 * offers flock, and a lock must hold across processes and containers that
 * share the file. Bun's FFI is imported by a computed name so that Deno
 * never resolves it.
 */
function loadLibc(): Promise<LibcLock> {
  libc ??= (async () => {
    const global = globalThis as unknown as { Deno?: DenoFfi; Bun?: unknown };
    if (global.Bun !== undefined) {
      const module = "bun:ffi";
      const ffi = (await import(module)) as BunFfi;
      return ffi.dlopen("libc.so.6", {
        open: { args: ["ptr", "i32"], returns: "i32" },
        flock: { args: ["i32", "i32"], returns: "i32" },
        close: { args: ["i32"], returns: "i32" },
      }).symbols;
    }
    if (global.Deno !== undefined) {
      return global.Deno.dlopen("libc.so.6", {
        open: { parameters: ["buffer", "i32"], result: "i32" },
        flock: { parameters: ["i32", "i32"], result: "i32" },
        close: { parameters: ["i32"], result: "i32" },
      }).symbols;
    }
    throw new Error("no FFI for flock: run under Deno or Bun");
  })();
  return libc;
}

interface DenoFfi {
  dlopen(
    path: string,
    symbols: Record<string, { parameters: string[]; result: string }>,
  ): { symbols: LibcLock };
}

interface BunFfi {
  dlopen(
    path: string,
    symbols: Record<string, { args: string[]; returns: string }>,
  ): { symbols: LibcLock };
}

/**
 * Takes an exclusive flock(2) on the existing file at `path` without
 * waiting: the lock, or undefined when another open file holds it. Throws
 * when the file cannot be opened.
 */
export async function tryLockFile(path: string): Promise<FileLock | undefined> {
  const lib = await loadLibc();
  const fd = lib.open(new TextEncoder().encode(`${path}\0`), O_RDONLY_CLOEXEC);
  if (fd < 0) throw new Error(`cannot open ${path} to lock it`);
  if (lib.flock(fd, LOCK_EX_NB) !== 0) {
    lib.close(fd);
    return undefined;
  }
  let held = true;
  return {
    release: () => {
      if (held) lib.close(fd);
      held = false;
    },
  };
}
