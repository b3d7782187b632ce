/**
 * A small world for crash tests that outlives the process: claims (with the
 * API server's uid and binding), the driver's volumes and the PVs, in one
 * JSON file rewritten atomically after each change, and the provisioning
 * controller of lib/provision over it with the real file journal. Each
 * step of the journal protocol (appended and synced; or, when the file is
 * replaced, temporary file written, synced, renamed, directory synced) can
 * be paused (`pause`), so that a parent process can SIGKILL this one
 * exactly there.
 */
import { FakeDataSources } from "../fakes/data_sources.ts";
import { randomUUID } from "node:crypto";
import { renameSync, writeFileSync } from "node:fs";
import { type FileJournal, openFileJournal } from "../../lib/journal/file_journal.ts";
import type { Claim, PersistentVolume } from "../../lib/model/objects.ts";
import type { ProvisionController } from "../../lib/provision/controller.ts";
import { type Intent, INTENT_JOURNAL_SHAPE } from "../../lib/provision/intent/intent.ts";
import type { ProvisionApi, ProvisionCsi } from "../../lib/provision/ports.ts";
import { wireProvisioning } from "../../lib/provision/wiring.ts";
import { WorkQueue } from "../../lib/queue/work/queue.ts";
import {
  claimDecisionOptions,
  createdVolume,
  persistentVolumeOptions,
  provisionOptions,
  storageClass,
} from "../builders/provision.ts";
import { quiet } from "../fakes/logger.ts";

/** What the file holds. */
export interface WorldState {
  claims: Record<string, Claim>;
  /** The driver's volumes: name → id. */
  volumes: Record<string, string>;
  pvs: Record<string, PersistentVolume>;
}

export function readState(path: string): WorldState {
  return JSON.parse(Deno.readTextFileSync(path)) as WorldState;
}

export function writeState(path: string, state: WorldState): void {
  writeFileSync(`${path}.tmp`, JSON.stringify(state, null, 1));
  renameSync(`${path}.tmp`, path);
}

/** The controller over the world in `statePath`, journaling to `journalPath`. */
export async function openWorld(
  paths: { state: string; journal: string },
  pause: (step: string) => Promise<void>,
  options: { replaceEveryWrite?: boolean } = {},
): Promise<
  { controller: ProvisionController; journal: FileJournal<Intent>; keys: () => string[] }
> {
  const state = readState(paths.state);
  const save = () => writeState(paths.state, state);
  let opened = false;
  const journal = await openFileJournal(paths.journal, {
    ...INTENT_JOURNAL_SHAPE,
    logger: quiet,
    // 0: every write replaces the file, so that its replacement's steps are killed at too.
    ...(options.replaceEveryWrite ? { compactBytes: 0 } : {}),
    // Creating the missing journal at start is not a step of provisioning.
    afterStep: (step) => opened ? pause(`journal-${step}`) : undefined,
  });
  opened = true;
  const csi: ProvisionCsi = {
    createVolume: async (request) => {
      let id = state.volumes[request.name];
      if (id === undefined) {
        id = `${request.name}-${randomUUID().slice(0, 8)}`;
        state.volumes[request.name] = id;
        save();
        await pause("volume-created");
      }
      return createdVolume({
        capacity_bytes: request.capacity_range?.required_bytes ?? "0",
        volume_id: id,
      });
    },
    deleteVolume: (request) => {
      for (const [name, id] of Object.entries(state.volumes)) {
        if (id === request.volume_id) delete state.volumes[name];
      }
      save();
      return Promise.resolve();
    },
  };
  const api = worldApi(state, { save, pause });
  const claims = {
    // The informer keeps unbound claims only (lib/kube/trim.ts).
    get: (key: string) => {
      const claim = state.claims[key];
      return claim?.spec.volumeName ? undefined : claim;
    },
  };
  const { controller } = wireProvisioning({
    caches: {
      claims,
      classes: new Map([["fast", storageClass()]]),
      volumes: { get: (name: string) => state.pvs[name], list: () => Object.values(state.pvs) },
    },
    api,
    sources: new FakeDataSources(),
    csi,
    events: { record: () => {} },
    metrics: { succeeded: () => {}, failed: () => {} },
    journal,
    logger: quiet,
    saveQueue: new WorkQueue(),
    retryClaim: () => {},
  }, {
    decide: claimDecisionOptions({ immediateBinding: false }),
    prepare: provisionOptions(),
    persistentVolume: persistentVolumeOptions({ identity: "crash-test" }),
    timeoutMs: 1000,
  });
  return { controller, journal, keys: () => Object.keys(state.claims) };
}

/** The API server: PVs (a saved PV binds its claim, as the PV controller would), claims. */
function worldApi(
  state: WorldState,
  hooks: { save: () => void; pause: (step: string) => Promise<void> },
): ProvisionApi {
  return {
    createPersistentVolume: async (pv) => {
      const name = pv.metadata.name;
      const existing = state.pvs[name];
      if (existing !== undefined) return { kind: "exists", existing };
      state.pvs[name] = pv;
      const claim = Object.values(state.claims).find((candidate) =>
        candidate.metadata.uid === pv.spec.claimRef?.uid
      );
      if (claim !== undefined) claim.spec.volumeName = name;
      hooks.save();
      await hooks.pause("pv-saved");
      return { kind: "created" };
    },
    readPersistentVolume: (name) => Promise.resolve(state.pvs[name]),
    readClaim: (key) => Promise.resolve(state.claims[`${key.namespace}/${key.name}`]),
    removeSelectedNode: () => Promise.resolve("removed"),
    readSecretData: () => Promise.reject(new Error("no secrets in this world")),
    findSecretData: () => Promise.reject(new Error("no secrets in this world")),
    readVolumeAttributesClass: () => Promise.resolve(undefined),
  };
}
