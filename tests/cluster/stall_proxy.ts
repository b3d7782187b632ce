/**
 * A TCP proxy between clients (agents) and kube-apiserver that passes bytes
 * normally and, on command, stalls: it keeps the connections open and
 * forwards nothing in one direction, the way a half-dead load balancer, a
 * conntrack entry gone stale or a frozen NAT leaves a watch that never ends
 * and never sends another event. The kernel keeps acknowledging, so neither
 * side sees an error: only a client's own timeouts can notice.
 *
 * With `tls` (the API server's own serving certificate and key, whose SAN is
 * 127.0.0.1) it terminates TLS and dials the API server with TLS verified, so
 * clients verify the proxy with the cluster's CA bundle exactly as they
 * verify the API server, and it reads the HTTP/1.1 request heads (ALPN offers
 * only http/1.1): a stall can then pick connections by their requests, e.g.
 * "the watches opened from now on get no answer". Without `tls` it is a plain
 * TCP relay and stalls pick connections by age only.
 */

import { type RequestHead, RequestHeadParser } from "./request_heads.ts";

/** down: server → client (answers, watch events). up: client → server (requests). */
export type StallDirection = "down" | "up" | "both";

/** Which connections a stall holds. */
export interface StallRule {
  /** Default "down". */
  direction?: StallDirection;
  /** Connections already open, those accepted from now on, or both (default). */
  connections?: "open" | "new" | "all";
  /**
   * Picks connections by their requests (TLS mode only). With connections
   * "open": those whose latest request matches now, e.g. the watches open now
   * (`{ request: isWatch, connections: "open" }`: they go silent, while later
   * requests, watches included, pass). Otherwise: connections that carry a
   * matching request sent from now on, held from that request on (for "down"
   * its answer never comes, for "up" the chunk carrying it is not forwarded).
   */
  request?: (request: RequestHead) => boolean;
}

/** A request seen by the proxy (TLS mode). */
export interface ProxiedRequest extends RequestHead {
  connection: number;
  /** performance.now() when its head passed. */
  at: number;
}

/** A stall in force until released. */
export interface Stall {
  /** Ids of the connections it holds (or held). */
  readonly connections: ReadonlySet<number>;
  /** Forwarding resumes: bytes held back are delivered if both ends are still there. */
  release(): void;
}

/** The TLS material of TLS mode: what the proxy presents, and what it trusts upstream. */
export interface ProxyTls {
  certPem: string;
  keyPem: string;
  caPem: string;
}

interface StallState extends Stall {
  readonly since: number;
  readonly rule: StallRule;
  readonly connections: Set<number>;
  released: boolean;
}

interface Link {
  id: number;
  openedAt: number;
  client: Deno.Conn;
  server: Deno.Conn | undefined;
  closed: boolean;
  lastRequest: RequestHead | undefined;
  /** Resolves when the link closes: pumps waiting at a gate stop waiting. */
  whenClosed: Promise<void>;
  close(): void;
}

export class StallingProxy {
  /** https://127.0.0.1:PORT (TLS mode) or 127.0.0.1:PORT. */
  readonly url: string;
  readonly port: number;
  /** Every request seen (TLS mode), oldest first. */
  readonly requests: ProxiedRequest[] = [];
  readonly #listener: Deno.Listener;
  readonly #target: { hostname: string; port: number };
  readonly #tls: ProxyTls | undefined;
  readonly #links = new Set<Link>();
  readonly #stalls: StallState[] = [];
  readonly #tasks = new Set<Promise<void>>();
  #nextId = 1;
  #changed = Promise.withResolvers<void>();

  /** Listens on a free loopback port and relays to `target` (kube-apiserver). */
  constructor(target: { hostname: string; port: number }, options: { tls?: ProxyTls } = {}) {
    this.#target = target;
    this.#tls = options.tls;
    const address = { hostname: "127.0.0.1", port: 0 };
    this.#listener = this.#tls
      ? Deno.listenTls({
        ...address,
        cert: this.#tls.certPem,
        key: this.#tls.keyPem,
        alpnProtocols: ["http/1.1"],
      })
      : Deno.listen(address);
    this.port = (this.#listener.addr as Deno.NetAddr).port;
    this.url = this.#tls ? `https://127.0.0.1:${this.port}` : `127.0.0.1:${this.port}`;
    this.#track(this.#accept());
  }

  /** Connections open now. */
  get openConnections(): number {
    return this.#links.size;
  }

  /** Starts a stall; it holds until release() (or releaseAll(), or close()). */
  stall(rule: StallRule = {}): Stall {
    if (rule.request && !this.#tls) {
      throw new Error("a stall by request needs the TLS mode (the proxy must read requests)");
    }
    const stall: StallState = {
      since: performance.now(),
      rule,
      connections: new Set(),
      released: false,
      release: () => {
        if (stall.released) return;
        stall.released = true;
        this.#stalls.splice(this.#stalls.indexOf(stall), 1);
        this.#wake();
      },
    };
    for (const link of this.#links) {
      if (rule.connections === "new") continue;
      const { request } = rule;
      if (request === undefined) stall.connections.add(link.id);
      else if (rule.connections === "open" && link.lastRequest && request(link.lastRequest)) {
        stall.connections.add(link.id);
      }
    }
    this.#stalls.push(stall);
    return stall;
  }

  /**
   * Closes every open connection whose last request matches (TLS mode), as a
   * network blip would: the clients see their streams end and reconnect.
   * Returns how many it closed.
   */
  cut(request: (head: RequestHead) => boolean): number {
    if (!this.#tls) throw new Error("cut() needs the TLS mode (the proxy must read requests)");
    let cut = 0;
    for (const link of this.#links) {
      if (!link.lastRequest || !request(link.lastRequest)) continue;
      link.close();
      cut++;
    }
    return cut;
  }

  /** Releases every stall. */
  releaseAll(): void {
    for (const stall of [...this.#stalls]) stall.release();
  }

  /** Stops listening, closes every connection and waits for the relays to end. */
  async close(): Promise<void> {
    this.releaseAll();
    try {
      this.#listener.close();
    } catch { /* already closed */ }
    for (const link of this.#links) link.close();
    while (this.#tasks.size > 0) await Promise.allSettled([...this.#tasks]);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #track(task: Promise<void>): void {
    this.#tasks.add(task);
    task.finally(() => this.#tasks.delete(task));
  }

  #wake(): void {
    this.#changed.resolve();
    this.#changed = Promise.withResolvers<void>();
  }

  async #accept(): Promise<void> {
    for (;;) {
      let client: Deno.Conn;
      try {
        client = await this.#listener.accept();
      } catch {
        return; // closed
      }
      this.#track(this.#relay(client));
    }
  }

  #newLink(client: Deno.Conn): Link {
    const closed = Promise.withResolvers<void>();
    const link: Link = {
      id: this.#nextId++,
      openedAt: performance.now(),
      client,
      server: undefined,
      closed: false,
      lastRequest: undefined,
      whenClosed: closed.promise,
      close: () => {
        if (link.closed) return;
        link.closed = true;
        for (const conn of [link.client, link.server]) {
          try {
            conn?.close();
          } catch { /* already closed */ }
        }
        this.#links.delete(link);
        closed.resolve();
      },
    };
    for (const stall of this.#stalls) {
      if (!stall.rule.request && stall.rule.connections !== "open") stall.connections.add(link.id);
    }
    this.#links.add(link);
    return link;
  }

  async #relay(client: Deno.Conn): Promise<void> {
    const link = this.#newLink(client);
    try {
      link.server = this.#tls
        ? await Deno.connectTls({
          ...this.#target,
          caCerts: [this.#tls.caPem],
          alpnProtocols: ["http/1.1"],
        })
        : await Deno.connect(this.#target);
    } catch {
      // The API server is down: the client sees its connection closed, as with a dead backend.
      link.close();
      return;
    }
    if (link.closed) return link.server.close();
    const parser = this.#tls ? new RequestHeadParser() : undefined;
    await Promise.allSettled([
      this.#pump(link, { from: client, to: link.server, direction: "up", parser }),
      this.#pump(link, { from: link.server, to: client, direction: "down", parser: undefined }),
    ]);
  }

  async #pump(
    link: Link,
    pipe: {
      from: Deno.Conn;
      to: Deno.Conn;
      direction: "up" | "down";
      parser: RequestHeadParser | undefined;
    },
  ): Promise<void> {
    const buffer = new Uint8Array(64 * 1024);
    try {
      for (;;) {
        const read = await pipe.from.read(buffer);
        if (read === null) break;
        const chunk = buffer.slice(0, read);
        if (pipe.parser) this.#noteRequests(link, pipe.parser.feed(chunk));
        await this.#gate(link, pipe.direction);
        if (link.closed) break;
        for (let written = 0; written < chunk.length;) {
          written += await pipe.to.write(chunk.subarray(written));
        }
      }
    } catch {
      // A reset or a close from the other pump: the link ends either way.
    } finally {
      link.close();
    }
  }

  #noteRequests(link: Link, heads: RequestHead[]): void {
    for (const head of heads) {
      const at = performance.now();
      this.requests.push({ ...head, connection: link.id, at });
      link.lastRequest = head;
      for (const stall of this.#stalls) {
        const { request, connections = "all" } = stall.rule;
        // "open" picked its connections when the stall began.
        if (request === undefined || connections === "open" || !request(head)) continue;
        if (connections === "new" && link.openedAt < stall.since) continue;
        stall.connections.add(link.id);
      }
    }
  }

  /** Waits while a stall holds this link in this direction. */
  async #gate(link: Link, direction: "up" | "down"): Promise<void> {
    while (!link.closed && this.#held(link, direction)) {
      await Promise.race([this.#changed.promise, link.whenClosed]);
    }
  }

  #held(link: Link, direction: "up" | "down"): boolean {
    return this.#stalls.some((stall) => {
      const stalled = stall.rule.direction ?? "down";
      return (stalled === "both" || stalled === direction) && stall.connections.has(link.id);
    });
  }
}

/** A request that opens a watch (`watch=true` or `watch=1`), e.g. for `StallRule.request`. */
export function isWatch(request: RequestHead): boolean {
  return /[?&]watch=(true|1)(&|$)/.test(request.path);
}
