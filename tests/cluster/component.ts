/**
 * Starting one control-plane component: spawn it on fresh loopback ports, poll
 * its health endpoint until it answers, retry on a port collision, and fail
 * with its log tail when it exits or never becomes ready.
 */

import { isAddressInUse } from "./ports.ts";
import { freeLoopbackPort } from "./ports.ts";
import { type ManagedProcess, type ProcessGroup, tailFile } from "./process.ts";
import { waitFor } from "./wait.ts";

export interface ComponentSpec {
  name: string;
  binary: string;
  logFile: string;
  /** How many loopback ports the component listens on. */
  portCount: number;
  args: (ports: number[]) => string[];
  /** Resolves true once the component serves. */
  probe: (ports: number[]) => Promise<boolean>;
  timeoutMs?: number;
  env?: Record<string, string>;
}

export interface StartedComponent {
  process: ManagedProcess;
  ports: number[];
}

const PORT_ATTEMPTS = 3;

export async function startComponent(
  group: ProcessGroup,
  spec: ComponentSpec,
  signal?: AbortSignal,
): Promise<StartedComponent> {
  for (let attempt = 1;; attempt++) {
    const ports = Array.from({ length: spec.portCount }, () => freeLoopbackPort());
    const process = group.spawn({
      name: spec.name,
      command: spec.binary,
      args: spec.args(ports),
      logFile: spec.logFile,
      ...(spec.env ? { env: spec.env } : {}),
    });
    const outcome = await waitFor(
      async () => !process.running ? "exited" : (await spec.probe(ports)) ? "ready" : undefined,
      {
        description: `${spec.name} to become ready (log: ${spec.logFile})`,
        timeoutMs: spec.timeoutMs ?? 60_000,
        intervalMs: 100,
        ...(signal ? { signal } : {}),
      },
    ).catch(async (error) => {
      await process.stop({ graceMs: 1_000 });
      throw new Error(`${error.message}\n${await tailFile(spec.logFile, 30)}`);
    });
    if (outcome === "ready") return { process, ports };
    const log = await tailFile(spec.logFile, 30);
    if (attempt < PORT_ATTEMPTS && isAddressInUse(log)) continue;
    throw new Error(
      `${spec.name} exited (code ${process.status?.code}) before it was ready; ` +
        `log ${spec.logFile}:\n${log}`,
    );
  }
}

/**
 * Whether GET `url` answers 2xx. `caPem` verifies a self-signed server; a
 * connection error counts as "not yet".
 */
export async function httpReady(
  url: string,
  options: { caPem?: string; token?: string } = {},
): Promise<boolean> {
  const client = options.caPem ? Deno.createHttpClient({ caCerts: [options.caPem] }) : undefined;
  try {
    const response = await fetch(url, {
      ...(client ? { client } : {}),
      ...(options.token ? { headers: { authorization: `Bearer ${options.token}` } } : {}),
      signal: AbortSignal.timeout(2_000),
    });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  } finally {
    client?.close();
  }
}
