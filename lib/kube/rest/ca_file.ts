/**
 * The cluster CA, followed when it comes from a file (the ServiceAccount's
 * ca.crt, a kubeconfig's certificate-authority): after a CA rotation the old
 * CA fails every new connection for good, and liveness cannot see it. As
 * client-go does, the file is read again and a changed CA is used for new
 * connections: every CA_CHECK_INTERVAL_MS before a request, and at most
 * every CA_FAILURE_CHECK_MS after a request that got no answer (the first
 * sign of a rotation). Reading a small file is cheaper than a stat's worth of
 * bookkeeping, so the content itself is compared.
 */
import { readFileSync } from "node:fs";
import type { Logger } from "../../log/logger.ts";
import { type TlsFetch, tlsFetch, type TlsSettings } from "../../runtime/platform.ts";

/** How often the CA file is compared while requests succeed. */
export const CA_CHECK_INTERVAL_MS = 10_000;
/** How often, at most, a failed request makes it compared. */
export const CA_FAILURE_CHECK_MS = 1_000;

/** What a CA-following transport is built from; tests pass their own transport and clock. */
interface CaFileOptions {
  /** The TLS settings as loaded; their `ca` is the file's content at load. */
  tls: TlsSettings;
  caFile: string;
  logger?: Logger;
  open?: (tls: TlsSettings) => TlsFetch;
  read?: (path: string) => Uint8Array;
  now?: () => number;
}

/** A transport whose CA is the file's current content; the ones it replaced close with it. */
export function caFileTransport(options: CaFileOptions): TlsFetch {
  const open = options.open ?? tlsFetch;
  const read = options.read ?? ((path: string) => readFileSync(path));
  const now = options.now ?? (() => performance.now());
  let ca = pemBytes(options.tls.ca);
  let current = open(options.tls);
  const replaced: TlsFetch[] = [];
  let checkedAt = now();
  const check = (minimumMs: number) => {
    if (now() - checkedAt < minimumMs) return;
    checkedAt = now();
    const fresh = readCa(read, options.caFile);
    if (fresh === undefined || equalBytes(fresh, ca)) return;
    // In-flight requests keep the transport they started on; it closes with this one.
    replaced.push(current);
    current = open({ ...options.tls, ca: fresh });
    ca = fresh;
    options.logger?.notice({ caFile: options.caFile }, "The cluster CA file changed: using it");
  };
  return {
    fetch: async (url, init) => {
      check(CA_CHECK_INTERVAL_MS);
      try {
        return await current.fetch(url, init);
      } catch (error) {
        if (!init.signal?.aborted) check(CA_FAILURE_CHECK_MS);
        throw error;
      }
    },
    close: () => {
      for (const transport of [...replaced, current]) transport.close();
    },
  };
}

/** The file's certificates; undefined while it is missing or half written. */
function readCa(read: (path: string) => Uint8Array, path: string): Uint8Array | undefined {
  let bytes: Uint8Array;
  try {
    bytes = read(path);
  } catch {
    return undefined;
  }
  const text = new TextDecoder().decode(bytes).trimEnd();
  return text.includes("-----BEGIN CERTIFICATE-----") && text.endsWith("-----END CERTIFICATE-----")
    ? bytes
    : undefined;
}

function pemBytes(value: string | Uint8Array | undefined): Uint8Array {
  if (value === undefined) return new Uint8Array();
  return typeof value === "string" ? new TextEncoder().encode(value) : value;
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, index) => byte === b[index]);
}
