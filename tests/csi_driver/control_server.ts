/**
 * Serves a fetch-style app (hono's app.fetch) on a unix socket through
 * node:http, which listens on socket paths under Deno, Bun and Node alike.
 */
import * as http from "node:http";
import { Buffer } from "node:buffer";

export type FetchHandler = (request: Request) => Response | Promise<Response>;

export interface ControlServer {
  close(): Promise<void>;
}

/** Listens on socketPath (which must be free) until close(). */
export async function serveOnSocket(
  socketPath: string,
  handler: FetchHandler,
): Promise<ControlServer> {
  const server = http.createServer((incoming, outgoing) => {
    void answer(incoming, outgoing, handler);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function answer(
  incoming: http.IncomingMessage,
  outgoing: http.ServerResponse,
  handler: FetchHandler,
): Promise<void> {
  try {
    const chunks: Buffer[] = [];
    for await (const chunk of incoming) chunks.push(chunk as Buffer);
    const method = incoming.method ?? "GET";
    const headers = new Headers();
    for (const [name, value] of Object.entries(incoming.headers)) {
      if (typeof value === "string") headers.set(name, value);
    }
    const hasBody = method !== "GET" && method !== "HEAD" && chunks.length > 0;
    const request = new Request(`http://control${incoming.url ?? "/"}`, {
      method,
      headers,
      ...(hasBody ? { body: Buffer.concat(chunks) } : {}),
    });
    const response = await handler(request);
    const body = Buffer.from(await response.arrayBuffer());
    outgoing.writeHead(response.status, Object.fromEntries(response.headers));
    outgoing.end(body);
  } catch (error: unknown) {
    outgoing.writeHead(500, { "content-type": "application/json" });
    outgoing.end(JSON.stringify({ error: error instanceof Error ? error.message : String(error) }));
  }
}
