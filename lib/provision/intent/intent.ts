/**
 * Intents: "CreateVolume X for claim Y", written to the journal before the
 * call and cleared once the volume has a PV or is gone, so that a volume
 * created for a claim that is deleted while the agent is down, or killed
 * between CreateVolume and the PV save, does not leak (upstream
 * external-provisioner leaks it). Pure: what an intent holds, how it is checked
 * when read back, and which intents a claim no longer needs.
 *
 * An intent never holds secret data: it keeps the provisioner Secret's
 * reference as resolved when the request was made (the same reference the PV
 * would carry in its provisioner-deletion-secret annotations), so that the
 * volume can be deleted even after its StorageClass was deleted or edited.
 */
import type { CreateVolumeRequest } from "../../csi/types.ts";
import type { Claim, SecretReference } from "../../model/objects.ts";
import { ANN_SELECTED_NODE } from "../../model/keys.ts";
import { type ClaimDecisionOptions, screenClaim } from "../decide.ts";

/** One CreateVolume the agent set out to make, as written to the journal. */
export interface Intent {
  /** The PV and CSI volume name (the journal's key). */
  pvName: string;
  claim: { namespace: string; name: string; uid: string };
  /** The StorageClass the request was built from (to re-resolve a Secret that moved). */
  className: string;
  /** The provisioner Secret the request carried, by reference only; null when none. */
  provisionerSecret: SecretReference | null;
  /** The request as sent, with `secrets: {}`. */
  request: CreateVolumeRequest;
  /** When the first attempt was recorded (ISO 8601). */
  since: string;
}

/** How an intent ended (the label of csi_node_provisioner_journal_settled_total). */
export type IntentOutcome =
  /** Its PV was saved: the normal end. */
  | "pv_saved"
  /** This node's PV of that name holds the volume (found when settling). */
  | "pv_exists"
  /** The volume was deleted: its claim was gone, replaced, moved, or its PV refused. */
  | "volume_deleted"
  /** The driver answered that it did not (and will not) create the volume. */
  | "no_volume";

/** The claim key ("namespace/name") an intent was made for. */
export function intentKey(intent: Pick<Intent, "claim">): string {
  return `${intent.claim.namespace}/${intent.claim.name}`;
}

/** The intent of a request about to be sent; `secrets` are left out. */
export function makeIntent(
  claim: Claim,
  request: { className: string; provisionerSecret: SecretReference | null },
  options: { request: CreateVolumeRequest; now: Date },
): Intent {
  const { namespace, name, uid } = claim.metadata;
  return {
    pvName: options.request.name,
    claim: { namespace, name, uid },
    className: request.className,
    provisionerSecret: request.provisionerSecret,
    request: { ...options.request, secrets: {} },
    since: options.now.toISOString(),
  };
}

/**
 * What becomes of an intent given the claim it was made for, as the cache or
 * the API server has it now: "settle" (the claim is gone, replaced by
 * another with the same name, bound, being deleted, or no longer this
 * node's: make sure no volume is left behind), or "keep" (the claim is still
 * this node's to provision; its next attempt ends the intent).
 */
export function intentFate(
  intent: Intent,
  claim: Claim | undefined,
  options: ClaimDecisionOptions,
): "settle" | "keep" {
  if (claim === undefined || claim.metadata.uid !== intent.claim.uid) return "settle";
  if (screenClaim(claim, options).kind === "ignore") return "settle";
  // No node selected: the scheduler (or the ownership race) will pick again;
  // if it picks this node, the next attempt creates the volume again.
  return (claim.metadata.annotations?.[ANN_SELECTED_NODE] ?? "") === "" ? "settle" : "keep";
}

/** Checks an intent read back from disk: the intent, or what is wrong with it. */
export function parseIntent(raw: unknown): Intent | string {
  if (!isObject(raw)) return "an entry is not an object";
  const claim = raw["claim"];
  const request = raw["request"];
  const secret = raw["provisionerSecret"];
  const problems = [
    typeof raw["pvName"] === "string" && raw["pvName"] !== "" ? "" : "pvName",
    isObject(claim) && ["namespace", "name", "uid"].every((key) => typeof claim[key] === "string")
      ? ""
      : "claim",
    typeof raw["className"] === "string" ? "" : "className",
    secret === null || (isObject(secret) && typeof secret["name"] === "string" &&
        typeof secret["namespace"] === "string")
      ? ""
      : "provisionerSecret",
    isObject(request) && request["name"] === raw["pvName"] &&
      Array.isArray(request["volume_capabilities"]) && isObject(request["parameters"])
      ? ""
      : "request",
    typeof raw["since"] === "string" && !Number.isNaN(Date.parse(raw["since"])) ? "" : "since",
  ].filter((field) => field !== "");
  if (problems.length > 0) {
    return `entry ${JSON.stringify(raw["pvName"] ?? null)}: bad ${problems.join(", ")}`;
  }
  const intent = raw as unknown as Intent;
  return { ...intent, request: { ...intent.request, secrets: {} } };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * How the intent journal holds intents (lib/journal's FileJournalOptions):
 * one per PV name, grouped by claim, dated and checked as written here. The
 * agent (main.ts) and the crash tests open the journal with it.
 */
export const INTENT_JOURNAL_SHAPE = {
  keyOf: (intent: Intent): string => intent.pvName,
  groupOf: (intent: Intent): string => intentKey(intent),
  sinceOf: (intent: Intent): string => intent.since,
  validate: parseIntent,
};
