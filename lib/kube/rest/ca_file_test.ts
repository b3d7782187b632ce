import { deepStrictEqual, rejects, strictEqual } from "node:assert/strict";
import type { TlsFetch, TlsSettings } from "../../runtime/platform.ts";
import { CA_CHECK_INTERVAL_MS, CA_FAILURE_CHECK_MS, caFileTransport } from "./ca_file.ts";

const OLD = "-----BEGIN CERTIFICATE-----\nold\n-----END CERTIFICATE-----\n";
const NEW = "-----BEGIN CERTIFICATE-----\nnew\n-----END CERTIFICATE-----\n";

/** Transports that answer only when their CA is the server's; a file and a clock the test sets. */
function world() {
  const state = {
    serverCa: OLD,
    file: OLD as string | undefined,
    clock: 0,
    reads: 0,
    opened: [] as string[],
    closed: [] as string[],
  };
  const open = (tls: TlsSettings): TlsFetch => {
    const ca = new TextDecoder().decode(tls.ca as Uint8Array);
    state.opened.push(ca);
    return {
      fetch: () =>
        ca === state.serverCa
          ? Promise.resolve(new Response("{}"))
          : Promise.reject(new TypeError("invalid peer certificate: UnknownIssuer")),
      close: () => state.closed.push(ca),
    };
  };
  const transport = caFileTransport({
    tls: { ca: new TextEncoder().encode(OLD) },
    caFile: "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt",
    open,
    read: () => {
      state.reads++;
      if (state.file === undefined) throw new Error("ENOENT");
      return new TextEncoder().encode(state.file);
    },
    now: () => state.clock,
  });
  const request = () => transport.fetch("https://api/x", { method: "GET" });
  return { state, transport, request };
}

Deno.test("caFileTransport(): a CA rotation is followed after the first failure, without a restart", async () => {
  const { state, transport, request } = world();
  await request();
  strictEqual(state.reads, 0, "no read while requests succeed within the interval");
  state.serverCa = NEW;
  state.file = NEW;
  state.clock += CA_FAILURE_CHECK_MS;
  await rejects(request(), /UnknownIssuer/);
  await request();
  deepStrictEqual(state.opened, [OLD, NEW]);
  strictEqual(state.reads, 1);
  transport.close();
  deepStrictEqual(state.closed.sort(), [NEW, OLD]);
});

Deno.test("caFileTransport(): the file is compared every interval while requests succeed, and at most every second on failures", async () => {
  const { state, transport, request } = world();
  state.clock += CA_CHECK_INTERVAL_MS - 1;
  await request();
  strictEqual(state.reads, 0);
  state.clock += 1;
  await request();
  strictEqual(state.reads, 1);
  state.serverCa = NEW;
  for (let i = 0; i < 5; i++) await rejects(request(), /UnknownIssuer/);
  strictEqual(state.reads, 1, "failures within a second of the last comparison read nothing");
  state.clock += CA_FAILURE_CHECK_MS;
  await rejects(request(), /UnknownIssuer/);
  strictEqual(state.reads, 2);
  transport.close();
});

Deno.test("caFileTransport(): a missing or half-written file keeps the CA in use", async () => {
  const { state, transport, request } = world();
  state.file = undefined;
  state.clock += CA_CHECK_INTERVAL_MS;
  await request();
  state.file = "-----BEGIN CERTIFICATE-----\nne";
  state.clock += CA_CHECK_INTERVAL_MS;
  await request();
  strictEqual(state.reads, 2);
  deepStrictEqual(state.opened, [OLD]);
  transport.close();
});
