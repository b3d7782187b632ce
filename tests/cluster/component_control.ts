/**
 * Faults on a running control-plane component (kube-apiserver, etcd): stop it,
 * start it again on the same ports with the same data dir and certificates,
 * or freeze it with SIGSTOP and thaw it with SIGCONT. The chaos and health
 * tests use these to make the API server really go away, really hang, and
 * really come back, while the agents keep running against it.
 */

import type { ManagedProcess, ProcessGroup, StopOptions } from "./process.ts";
import { waitFor } from "./wait.ts";

/** How long a restarted component may take to serve again. */
const RESTART_TIMEOUT_MS = 60_000;

export class ComponentControl {
  readonly name: string;
  /** The loopback ports it listens on, the same after every restart. */
  readonly ports: readonly number[];
  readonly #group: ProcessGroup;
  readonly #probe: () => Promise<boolean>;
  #process: ManagedProcess;
  #frozen = false;
  #starts = 1;

  constructor(
    group: ProcessGroup,
    init: { process: ManagedProcess; ports: readonly number[]; probe: () => Promise<boolean> },
  ) {
    this.#group = group;
    this.#process = init.process;
    this.name = init.process.name;
    this.ports = init.ports;
    this.#probe = init.probe;
  }

  /** The current process (a new one after each start()). */
  get process(): ManagedProcess {
    return this.#process;
  }

  get running(): boolean {
    return this.#process.running;
  }

  get frozen(): boolean {
    return this.#frozen && this.#process.running;
  }

  /**
   * SIGTERM, then SIGKILL after `graceMs` (default 5 s); resolves once it
   * exited. Clients see their connections closed and then refused. A frozen
   * component is thawed first so that it can act on SIGTERM.
   */
  async stop(options: StopOptions = {}): Promise<void> {
    this.thaw();
    await this.#process.stop(options);
  }

  /** SIGKILL: a crash. Connections are reset; nothing is shut down cleanly. */
  async kill(): Promise<void> {
    await this.#process.kill();
    this.#frozen = false;
  }

  /**
   * Starts the stopped component again: the same command line, hence the same
   * ports, data dir and certificates (kube-apiserver reuses the serving
   * certificate it generated in --cert-dir, so kubeconfigs and proxies keep
   * working). Resolves once its health endpoint answers.
   */
  async start(): Promise<void> {
    this.#starts++;
    this.#process = await this.#group.respawn(this.#process, `start #${this.#starts}`);
    this.#frozen = false;
    const process = this.#process;
    await waitFor(async () => {
      if (!process.running) throw new Error(`${this.name} exited (log ${process.logFile})`);
      return await this.#probe();
    }, { description: `${this.name} to serve again`, timeoutMs: RESTART_TIMEOUT_MS });
  }

  /** stop() then start(). */
  async restart(options: StopOptions = {}): Promise<void> {
    await this.stop(options);
    await this.start();
  }

  /**
   * SIGSTOP: the process still holds its sockets, so the kernel still accepts
   * connections and buffers requests, but nothing is answered: every client
   * hangs until its own timeout or thaw().
   */
  freeze(): void {
    if (!this.#process.running) throw new Error(`${this.name} is not running`);
    this.#process.signal("SIGSTOP");
    this.#frozen = true;
  }

  /** SIGCONT: it answers what it got meanwhile. Does nothing unless frozen. */
  thaw(): void {
    if (!this.#frozen) return;
    this.#process.signal("SIGCONT");
    this.#frozen = false;
  }

  /** Resolves once the health endpoint answers (e.g. after thaw()). */
  async waitServing(timeoutMs = RESTART_TIMEOUT_MS): Promise<void> {
    await waitFor(() => this.#probe(), { description: `${this.name} to serve`, timeoutMs });
  }
}
