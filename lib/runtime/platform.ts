/**
 * The only file that touches runtime globals (Deno.*, Bun.*): serving HTTP,
 * and fetch with a cluster's TLS settings. Everything else the agent needs
 * from the host comes from `node:` built-ins, which both runtimes provide.
 */

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

/** TLS settings of one API server (node:https agent option names). */
export interface TlsSettings {
  /** PEM text or buffers, passed through as given. */
  ca?: unknown;
  cert?: unknown;
  key?: unknown;
  rejectUnauthorized?: boolean | undefined;
  servername?: string | undefined;
}

/**
 * Bun's native fetch with these TLS settings (its `tls` request option), or
 * undefined elsewhere: Deno's fetch cannot skip verification per client, so
 * Deno keeps node:https. Under Bun the native client costs a fraction of the
 * CPU of Bun's JavaScript node:https per request (bench/README.md).
 */
export function tlsFetch(tls: TlsSettings): FetchLike | undefined {
  if (runtimeName() !== "bun") return undefined;
  const options = {
    ...(tls.ca === undefined ? {} : { ca: tls.ca }),
    ...(tls.cert === undefined ? {} : { cert: tls.cert }),
    ...(tls.key === undefined ? {} : { key: tls.key }),
    ...(tls.servername === undefined ? {} : { serverName: tls.servername }),
    rejectUnauthorized: tls.rejectUnauthorized !== false,
  };
  return (url, init) => fetch(url, { ...init, tls: options } as RequestInit);
}
