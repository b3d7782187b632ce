/**
 * The provisioning controller with small in-memory fakes of its ports (unit
 * tests only): a claim cache and the API server's own copy, PVs, a CSI
 * driver that answers from a script, the intent journal, and a record of
 * what the controller asked and reported.
 */
import { CsiError } from "../../lib/csi/status.ts";
import type {
  CreateVolumeRequest,
  CreateVolumeResponse,
  DeleteVolumeRequest,
} from "../../lib/csi/types.ts";
import type { EventRecord } from "../../lib/model/events.ts";
import type {
  Claim,
  PersistentVolume,
  SecretReference,
  StorageClass,
} from "../../lib/model/objects.ts";
import type { Logger } from "../../lib/log/logger.ts";
import { quiet } from "./logger.ts";
import { WorkQueue } from "../../lib/queue/work/queue.ts";
import type { HandleOutcome } from "../../lib/queue/work/workers.ts";
import type { Intent } from "../../lib/provision/intent/intent.ts";
import type { ProvisionApi, ProvisionCsi, PvCreateOutcome } from "../../lib/provision/ports.ts";
import { wireProvisioning } from "../../lib/provision/wiring.ts";
import type { ProvisionOptions } from "../../lib/provision/request/request.ts";
import { FakeDataSources } from "./data_sources.ts";
import { MemoryJournal } from "./journal.ts";
import {
  claim as buildClaim,
  CLAIM_UID,
  claimDecisionOptions,
  createdVolume,
  DRIVER,
  NODE,
  persistentVolumeOptions,
  provisionOptions,
  storageClass,
  TOPOLOGY_KEY,
} from "../builders/provision.ts";

export const KEY = "apps/data";
export const PV_NAME = `pvc-${CLAIM_UID}`;

/** What the fake driver answers to one CreateVolume. */
export type CreateAnswer = CreateVolumeResponse | CsiError;

/** The fake driver's volume for a request: id `vol-<name>`, this node's topology. */
export function volumeOf(request: CreateVolumeRequest, capacity?: string): CreateVolumeResponse {
  return createdVolume({
    capacity_bytes: capacity ?? request.capacity_range?.required_bytes ?? "0",
    volume_id: `vol-${request.name}`,
    content_source: request.volume_content_source ?? null,
  });
}

/** "Type Reason" of each event, in order. */
export const reasons = (events: EventRecord[]): string[] =>
  events.map((event) => `${event.type} ${event.reason}`);

/** A PV of our driver holding `volumeHandle` on a node (this one by default). */
export function pvHolding(name: string, volumeHandle: string, node = NODE): PersistentVolume {
  const onNode = { key: TOPOLOGY_KEY, operator: "In", values: [node] };
  return {
    metadata: { name },
    spec: {
      csi: { driver: DRIVER, volumeHandle },
      nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [onNode] }] } },
    },
  };
}

function keyed(claims: Claim[]): Map<string, Claim> {
  return new Map(claims.map((c) => [`${c.metadata.namespace}/${c.metadata.name}`, c]));
}

/** What the fake world recorded. */
export interface WorldRecord {
  created: CreateVolumeRequest[];
  /** The journal's intents as they were when each CreateVolume was sent. */
  journaledAtCreate: string[][];
  deleted: DeleteVolumeRequest[];
  savedPvs: PersistentVolume[];
  events: EventRecord[];
  selectedNodeRemoved: string[];
  /** Keys handed to the race, and uids it was told it lost after ResourceExhausted or whose CreateVolume answered. */
  raced: string[];
  released: string[];
  answered: string[];
  secretReads: string[];
  failed: number;
  succeeded: number;
  claimReads: number;
}

/** How a world starts. */
export interface WorldOptions {
  claims?: Claim[];
  classes?: StorageClass[];
  answers?: CreateAnswer[];
  intents?: Intent[];
  /** Secrets by "namespace/name"; others are NotFound. Default: any but "missing" exists. */
  secrets?: Record<string, Record<string, string>>;
  /** Secrets ("namespace/name") whose read fails with this message (e.g. Forbidden). */
  secretErrors?: Record<string, string>;
  /** Snapshots, contents and PVs the data source checks read. */
  sources?: FakeDataSources;
  prepare?: Partial<ProvisionOptions>;
  /** The driver's answer when `answers` has none left. */
  respond?: (request: CreateVolumeRequest) => CreateVolumeResponse;
  /** The controller's and the PV saver's logger; default: quiet. */
  logger?: Logger;
}

/** The fake world and its controller. */
export type World = ReturnType<typeof buildWorld>;

/** The world as the controller sees it, recorded. */
export function world(options: WorldOptions = {}): World {
  return buildWorld(options);
}

function buildWorld(options: WorldOptions) {
  const claims = keyed(options.claims ?? [buildClaim()]);
  const classes = new Map((options.classes ?? [storageClass()]).map((c) => [c.metadata.name, c]));
  const volumes = Object.assign(new Map<string, PersistentVolume>(), {
    list: () => [...volumes.values()],
  });
  const sources = options.sources ?? new FakeDataSources();
  const answers = [...(options.answers ?? [])];
  const record: WorldRecord = {
    created: [],
    journaledAtCreate: [],
    deleted: [],
    savedPvs: [],
    events: [],
    selectedNodeRemoved: [],
    raced: [],
    released: [],
    answered: [],
    secretReads: [],
    failed: 0,
    succeeded: 0,
    claimReads: 0,
  };
  const serverClaims = new Map(claims);
  const serverPvs = new Map<string, PersistentVolume>();
  const journal = new MemoryJournal(options.intents);
  const retried: string[] = [];
  const faults = { pvCreateFails: 0, deleteVolumeFails: 0 };
  /** The PV saver's clock, moved by hand. */
  const clock = { ms: 1_000_000 };
  let pvAnswer: PvCreateOutcome | undefined;
  const findSecret = (ref: SecretReference): Promise<Record<string, string> | undefined> => {
    const name = `${ref.namespace}/${ref.name}`;
    record.secretReads.push(name);
    const failure = options.secretErrors?.[name];
    if (failure !== undefined) return Promise.reject(new Error(failure));
    return Promise.resolve(
      options.secrets === undefined
        ? (ref.name === "missing" ? undefined : { password: "s3cret" })
        : options.secrets[name],
    );
  };
  const csi: ProvisionCsi = {
    createVolume: (request) => {
      record.created.push(request);
      record.journaledAtCreate.push(journal.entries().map((intent) => intent.pvName));
      const answer = answers.shift() ?? options.respond?.(request) ?? volumeOf(request);
      return answer instanceof CsiError ? Promise.reject(answer) : Promise.resolve(answer);
    },
    deleteVolume: (request) => {
      if (faults.deleteVolumeFails-- > 0) {
        return Promise.reject(new CsiError("/csi.v1.Controller/DeleteVolume", 14, "unavailable"));
      }
      record.deleted.push(request);
      return Promise.resolve();
    },
  };
  const api: ProvisionApi = {
    createPersistentVolume: (pv) => {
      if (faults.pvCreateFails-- > 0) return Promise.reject(new Error("apiserver unavailable"));
      if (pvAnswer !== undefined) return Promise.resolve(pvAnswer);
      record.savedPvs.push(pv);
      serverPvs.set(pv.metadata.name, pv);
      return Promise.resolve({ kind: "created" });
    },
    readPersistentVolume: (name) => Promise.resolve(serverPvs.get(name)),
    readClaim: (key) => {
      record.claimReads++;
      return Promise.resolve(serverClaims.get(`${key.namespace}/${key.name}`));
    },
    removeSelectedNode: (claim) => {
      record.selectedNodeRemoved.push(claim.metadata.name);
      return Promise.resolve("removed");
    },
    readSecretData: async (ref) => {
      const data = await findSecret(ref);
      if (data === undefined) throw new Error(`secrets "${ref.name}" not found`);
      return data;
    },
    findSecretData: findSecret,
    readVolumeAttributesClass: () => Promise.resolve(undefined),
  };
  const events = { record: (event: EventRecord) => record.events.push(event) };
  const saveQueue = new WorkQueue();
  const { controller, saver } = wireProvisioning({
    caches: { claims, classes, volumes },
    api,
    sources,
    csi,
    events,
    metrics: { succeeded: () => record.succeeded++, failed: () => record.failed++ },
    journal,
    logger: options.logger ?? quiet,
    race: {
      consider: (target) => {
        record.raced.push(target.key);
        return Promise.resolve({ kind: "done" });
      },
      released: (uid) => record.released.push(uid),
      answered: (_key, uid) => record.answered.push(uid),
    },
    saveQueue,
    retryClaim: (key) => retried.push(key),
    now: () => clock.ms,
  }, {
    decide: claimDecisionOptions(),
    prepare: provisionOptions(options.prepare),
    persistentVolume: persistentVolumeOptions(),
    timeoutMs: 1000,
  });
  const sync = (key = KEY): Promise<HandleOutcome> =>
    controller.sync(key, new AbortController().signal);
  return {
    /** The claim cache (the informer's view). */
    claims,
    /** The API server's claims (what readClaim sees). */
    serverClaims,
    serverPvs,
    classes,
    volumes,
    sources,
    journal,
    /** Claim keys the saver put back on the claim queue. */
    retried,
    faults,
    clock,
    record,
    controller,
    saver,
    saveQueue,
    sync,
    /** Deletes the claim from the cache and the API server. */
    deleteClaim: (key = KEY) => {
      claims.delete(key);
      serverClaims.delete(key);
    },
    /** Puts a claim in the cache and the API server. */
    putClaim: (claim: Claim) => {
      const key = `${claim.metadata.namespace}/${claim.metadata.name}`;
      claims.set(key, claim);
      serverClaims.set(key, claim);
    },
    /** What the API server answers to every PV creation from now on. */
    pvCreateAnswer: (answer: PvCreateOutcome) => (pvAnswer = answer),
    failPvCreate: (times: number) => (faults.pvCreateFails = times),
    close: () => saveQueue.shutDown(),
  };
}
