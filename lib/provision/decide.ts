/**
 * Is this claim ours to provision now? The node-mode part of upstream's
 * claim filter (sig-storage-lib `shouldProvision`, external-provisioner
 * `ShouldProvision`, `checkNode` and the checks at the top of `Provision`),
 * as pure decisions over the claim and its StorageClass. The Immediate
 * binding ownership race (which waits and updates the claim) is not decided
 * here; such claims get their own kind, which the controller hands to the
 * race (race/ownership_race.ts).
 *
 * One departure from upstream: a WaitForFirstConsumer claim selected to this
 * node whose class names our driver is provisioned without waiting for the
 * PV controller's `volume.kubernetes.io/storage-provisioner` annotation
 * (sig-storage-lib `shouldProvision` requires it). The scheduler has already
 * chosen provisioning by selecting the node (kube-scheduler's volume binder
 * selects a node only for claims it leaves to a provisioner), and the PV
 * controller binds a WaitForFirstConsumer claim only to a PV pre-bound to it
 * (component-helpers `FindMatchingVolume` with delayBinding), which ours is.
 * When our PV is there first, the PV controller binds it and never writes
 * the annotation: one claim update fewer, which every watcher of claims
 * (every node's agent, kube-scheduler) would have received.
 */
import {
  ANN_BETA_STORAGE_CLASS,
  ANN_BETA_STORAGE_PROVISIONER,
  ANN_MIGRATED_TO,
  ANN_SELECTED_NODE,
  ANN_STORAGE_PROVISIONER,
} from "../model/keys.ts";
import type { Claim, StorageClass } from "../model/objects.ts";
import { claimStorageClassName } from "../model/claim_class.ts";
import { atClaim, atClass } from "../model/messages.ts";
import { type Problem, problem } from "./outcome.ts";

/** Who we are. */
export interface ClaimDecisionOptions {
  driverName: string;
  /** NODE_NAME. */
  nodeName: string;
  /** --node-deployment-immediate-binding. */
  immediateBinding: boolean;
}

/** Why a claim is left alone. */
type IgnoreCause =
  /** spec.volumeName is set: nothing to provision. */
  | "bound"
  /** The claim is being deleted. */
  | "deleting"
  /** The claim (or its class) is for another provisioner. */
  | "otherProvisioner"
  /** Another node is selected: no API call, no event, no class lookup. */
  | "otherNode"
  /** WaitForFirstConsumer and no node selected yet: the scheduler will choose. */
  | "waitingForScheduler"
  /** Immediate binding while --node-deployment-immediate-binding=false. */
  | "immediateBindingDisabled"
  /**
   * No node selected and the class is not in the cache. The PV controller
   * reports a missing class itself; the caller may re-examine the claim
   * when StorageClasses change.
   */
  | "classMissing"
  /**
   * Selected to this node, no provisioner named yet, and the class is not a
   * WaitForFirstConsumer one: the PV controller names one first.
   */
  | "notNamed";

/** A claim left alone, with the reason for the debug log. */
interface Ignore {
  kind: "ignore";
  cause: IgnoreCause;
  reason: string;
}

/**
 * First pass over the claim alone: ignore it, or look up its class by name.
 * `named` is false for a claim selected to this node that no provisioner
 * is named on yet: only a WaitForFirstConsumer class of our driver makes it
 * ours.
 */
type ClaimScreen = Ignore | {
  kind: "lookUpClass";
  storageClassName: string;
  named: boolean;
};

/** What the caller does with a claim. */
export type ClaimDecision =
  /** Our node is selected: run prepareProvision with this class. */
  | { kind: "provision"; storageClass: StorageClass }
  | Ignore
  /** Immediate binding, no node selected yet: the ownership race (race/ownership_race.ts). */
  | { kind: "immediateBinding"; reason: string; storageClass: StorageClass }
  /** Warning event ProvisioningFailed, retry with backoff. */
  | Problem;

const IMMEDIATE_RACE = "Immediate binding and no node selected: racing to own the claim";

/**
 * The checks that need only the claim, so that claims of other nodes or
 * provisioners cost no lookup at all.
 */
export function screenClaim(claim: Claim, options: ClaimDecisionOptions): ClaimScreen {
  const annotations = claim.metadata.annotations ?? {};
  const key = `${claim.metadata.namespace}/${claim.metadata.name}`;
  if (claim.spec.volumeName) {
    return ignore(
      "bound",
      `claim ${key} is already bound to volume ${JSON.stringify(claim.spec.volumeName)}`,
    );
  }
  if (claim.metadata.deletionTimestamp) return ignore("deleting", `claim ${key} is being deleted`);
  const named = namedProvisioner(claim);
  const provisioner = named ?? "";
  const migrated = annotations[ANN_MIGRATED_TO];
  if (
    named === undefined && migrated === undefined &&
    annotations[ANN_SELECTED_NODE] === options.nodeName
  ) {
    return { kind: "lookUpClass", storageClassName: claimStorageClassName(claim), named: false };
  }
  if (provisioner !== options.driverName && migrated !== options.driverName) {
    return ignore(
      "otherProvisioner",
      `PVC annotated with external-provisioner name ${provisioner} does not match provisioner driver name ` +
        `${options.driverName}. This could mean the PVC is not migrated`,
    );
  }
  const selectedNode = annotations[ANN_SELECTED_NODE] ?? "";
  if (selectedNode !== "" && selectedNode !== options.nodeName) {
    return ignore(
      "otherNode",
      `not responsible for provisioning of PVC ${key} because it is not assigned to node ` +
        JSON.stringify(options.nodeName),
    );
  }
  return { kind: "lookUpClass", storageClassName: claimStorageClassName(claim), named: true };
}

/**
 * The provisioner the PV controller named on the claim, or undefined while
 * it has named none. The new annotation wins whenever it is present, even
 * when empty (as upstream reads it).
 */
export function namedProvisioner(claim: Claim): string | undefined {
  const annotations = claim.metadata.annotations ?? {};
  return annotations[ANN_STORAGE_PROVISIONER] ?? annotations[ANN_BETA_STORAGE_PROVISIONER];
}

/** The claim and its class as the caches have them. */
interface ClaimSnapshot {
  claim: Claim;
  /** The class named by screenClaim's storageClassName; undefined when not in the cache. */
  storageClass: StorageClass | undefined;
}

/** The full decision for a claim (runs screenClaim again, which is cheap). */
export function decideClaim(snapshot: ClaimSnapshot, options: ClaimDecisionOptions): ClaimDecision {
  const { claim, storageClass } = snapshot;
  const screen = screenClaim(claim, options);
  if (screen.kind === "ignore") return screen;
  if (!screen.named) return decideUnnamed(storageClass, options);
  const selected = (claim.metadata.annotations?.[ANN_SELECTED_NODE] ?? "") !== "";
  const className = screen.storageClassName;
  if (storageClass === undefined) {
    const message = `storageClass ${JSON.stringify(className)} not found`;
    if (!selected) return ignore("classMissing", message);
    const field = claim.metadata.annotations?.[ANN_BETA_STORAGE_CLASS] !== undefined
      ? `metadata.annotations[${JSON.stringify(ANN_BETA_STORAGE_CLASS)}]`
      : "spec.storageClassName";
    return problem(atClaim(message, claim, field), { state: "noChange" });
  }
  if (storageClass.provisioner !== options.driverName) {
    const message = "Unknown provisioner requested in claim's StorageClass: " +
      `${JSON.stringify(storageClass.provisioner)} is not ${JSON.stringify(options.driverName)}`;
    // Upstream stops silently (error log only); with a node selected, a
    // Warning tells the user why the claim stays Pending.
    return selected
      ? problem(atClass(message, className, "provisioner"))
      : ignore("otherProvisioner", message);
  }
  if (selected) return { kind: "provision", storageClass };
  if (storageClass.volumeBindingMode === "WaitForFirstConsumer") {
    return ignore(
      "waitingForScheduler",
      "WaitForFirstConsumer: waiting for the scheduler to select a node",
    );
  }
  // An absent binding mode is Immediate, the API server's default (upstream's
  // checkNode ignores a nil mode, which the API server never stores).
  if (!options.immediateBinding) {
    return ignore(
      "immediateBindingDisabled",
      "Immediate binding is disabled by --node-deployment-immediate-binding=false",
    );
  }
  return { kind: "immediateBinding", reason: IMMEDIATE_RACE, storageClass };
}

/**
 * A claim selected to this node, no provisioner named on it yet. Anything
 * but a WaitForFirstConsumer class of our driver waits, silently, for the PV
 * controller to name one: the class may be another driver's (its claims
 * get no Warning from us), missing (the PV controller reports that), or
 * Immediate (the PV controller may still bind the claim to an existing PV).
 */
function decideUnnamed(
  storageClass: StorageClass | undefined,
  options: ClaimDecisionOptions,
): ClaimDecision {
  if (storageClass === undefined) {
    return ignore("classMissing", `${NOT_NAMED}, and its class is not in the cache`);
  }
  if (storageClass.provisioner !== options.driverName) {
    return ignore(
      "otherProvisioner",
      `${NOT_NAMED}, and its class names provisioner ${JSON.stringify(storageClass.provisioner)}`,
    );
  }
  if (storageClass.volumeBindingMode !== "WaitForFirstConsumer") {
    return ignore("notNamed", `${NOT_NAMED}, and its class binds Immediate`);
  }
  return { kind: "provision", storageClass };
}

const NOT_NAMED = "the PV controller has not named a provisioner on the claim yet";

function ignore(cause: IgnoreCause, reason: string): Ignore {
  return { kind: "ignore", cause, reason };
}
