/**
 * One fake node of a running cluster: its driver's paths and process, the
 * recording proxy in front of it if any, its agent, and what a test asks of
 * the driver whatever its kind (the volumes it holds, the calls it got).
 */

import { DriverControl } from "../csi_driver/control_client.ts";
import type { CallRecord, CsiMethod } from "../csi_driver/types.ts";
import type { AgentHandle } from "./agents.ts";
import { callDriver, type CsiService } from "./csi_client.ts";
import type { CsiRecorder, RecordedCall } from "./csi_recorder.ts";
import {
  democraticSnapshotPath,
  democraticSnapshots,
  democraticVolumePath,
  democraticVolumes,
} from "./democratic.ts";
import type { DriverKind, NodeDriverPaths } from "./drivers.ts";
import { type DriverVolume, hostpathSnapshots, hostpathVolumes } from "./hostpath.ts";
import type { ManagedProcess } from "./process.ts";

/** A CSI call a node's driver got: the test driver's record, or the recording proxy's. */
export type DriverCall = Omit<CallRecord, "method"> & { method: string; response?: unknown };

export class ClusterNode implements NodeDriverPaths {
  readonly name: string;
  readonly index: number;
  readonly driverKind: DriverKind;
  readonly csiEndpoint: string;
  readonly csiSocket: string;
  readonly driverSocket: string;
  readonly controlEndpoint: string;
  readonly controlSocket: string;
  readonly stateDir: string;
  /** The node's CSI driver process, when the cluster has a driver. */
  driver?: ManagedProcess;
  /** The recording proxy agents talk to (driverOptions.recordCalls). */
  recorder?: CsiRecorder;
  /** The node's csi-snapshotter (ClusterOptions.snapshots). */
  snapshotter?: ManagedProcess;
  /** The agent started last on this node, if any. */
  agent?: AgentHandle;
  #control: DriverControl | undefined;

  constructor(init: { name: string; index: number; kind: DriverKind; paths: NodeDriverPaths }) {
    this.name = init.name;
    this.index = init.index;
    this.driverKind = init.kind;
    this.csiEndpoint = init.paths.csiEndpoint;
    this.csiSocket = init.paths.csiSocket;
    this.driverSocket = init.paths.driverSocket;
    this.controlEndpoint = init.paths.controlEndpoint;
    this.controlSocket = init.paths.controlSocket;
    this.stateDir = init.paths.stateDir;
    if (init.kind === "test") this.#control = new DriverControl(init.paths.controlEndpoint);
  }

  /** The test driver's control API (volumes, calls, faults, pool sizes); test driver only. */
  get control(): DriverControl {
    if (!this.#control) {
      throw new Error(
        `${this.name} runs the ${this.driverKind} driver, which has no control API ` +
          `(faults, latency, pool resizes are the test driver's: driver "test")`,
      );
    }
    return this.#control;
  }

  /** The volumes the node's driver holds. */
  async volumes(): Promise<DriverVolume[]> {
    if (this.#control) {
      return (await this.#control.volumes()).map((volume) => ({
        id: volume.id,
        name: volume.name,
        kind: volume.kind,
        sizeBytes: volume.sizeBytes,
      }));
    }
    if (this.driverKind === "democratic") return await democraticVolumes(this.stateDir);
    return await hostpathVolumes(this.stateDir);
  }

  /** The snapshots the node's hostpath driver holds. */
  async snapshots(): ReturnType<typeof hostpathSnapshots> {
    if (this.driverKind !== "hostpath") throw new Error(`${this.name}: no hostpath driver`);
    return await hostpathSnapshots(this.stateDir);
  }

  /** The node's democratic-csi snapshots (directory copies): their CSI ids and directories. */
  async democraticSnapshots(): Promise<{ id: string; dirName: string; path: string }[]> {
    this.#requireKind("democratic");
    return (await democraticSnapshots(this.stateDir)).map((snapshot) => ({
      ...snapshot,
      path: democraticSnapshotPath(this.stateDir, snapshot.dirName),
    }));
  }

  /** The directory of a democratic-csi volume on this node (present or not). */
  volumePath(volumeId: string): string {
    this.#requireKind("democratic");
    return democraticVolumePath(this.stateDir, volumeId);
  }

  #requireKind(kind: DriverKind): void {
    if (this.driverKind !== kind) {
      throw new Error(`${this.name} runs the ${this.driverKind} driver, not ${kind}`);
    }
  }

  /** The CSI calls the node's driver got (of one method, if given), oldest first. */
  async calls(method?: string): Promise<DriverCall[]> {
    if (this.#control) return await this.#control.calls(method as CsiMethod | undefined);
    if (!this.recorder) {
      throw new Error(
        `${this.name}'s calls are not recorded: start the cluster with driverOptions.recordCalls`,
      );
    }
    return this.recorder.calls(method);
  }

  /**
   * Calls the driver directly (not through the agent nor the proxy), as
   * someone else on the node would, e.g. a volume created behind the agent's back.
   */
  async callDriver(
    service: CsiService,
    method: string,
    request: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    return await callDriver(this.driverSocket, { service, method, request });
  }

  /**
   * SIGSTOP to the driver: a frozen driver, whose socket still accepts
   * connections and whose calls hang until thawDriver().
   */
  freezeDriver(): void {
    this.#requireDriver().signal("SIGSTOP");
  }

  /** SIGCONT: the frozen driver carries on with the calls it got meanwhile. */
  thawDriver(): void {
    this.#requireDriver().signal("SIGCONT");
  }

  #requireDriver(): ManagedProcess {
    if (!this.driver?.running) throw new Error(`${this.name} has no running driver`);
    return this.driver;
  }

  /** The secrets a recorded call carried, unstripped (recording proxy only); never print them. */
  secretsOf(call: DriverCall): Record<string, string> | undefined {
    return this.recorder?.secretsOf(call as RecordedCall);
  }
}
