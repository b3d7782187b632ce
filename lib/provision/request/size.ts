/**
 * CreateVolumeRequest.capacity_range.required_bytes from the claim's storage
 * request: the exact byte count, fractions rounded up like
 * `Quantity.Value()`, no rounding to allocation units, no limit_bytes.
 *
 * Upstream sends whatever `Value()` yields, including 0 for a missing
 * request and garbage beyond int64; the API server normally prevents those
 * claims, but a claim that gets past it is refused here with a message
 * instead of asking the driver for a nonsense size.
 */
import type { Claim } from "../../model/objects.ts";
import { MAX_INT64, parseQuantity } from "../../model/quantity.ts";
import { atClaim } from "../../model/messages.ts";

const FIELD = "spec.resources.requests.storage";

/** The requested size in bytes, or a located error message. */
type RequiredBytesResult = { ok: true; value: bigint } | { ok: false; error: string };

/** Reads and checks `spec.resources.requests.storage`. */
export function requiredBytes(claim: Claim): RequiredBytesResult {
  const text = claim.spec.resources?.requests?.storage;
  if (text === undefined) {
    return { ok: false, error: atClaim("claim has no storage request", claim, FIELD) };
  }
  const quoted = JSON.stringify(text);
  const parsed = parseQuantity(text);
  if (!parsed.ok) {
    return {
      ok: false,
      error: atClaim(`invalid storage request ${quoted}: ${parsed.error}`, claim, FIELD),
    };
  }
  if (parsed.value <= 0n) {
    return {
      ok: false,
      error: atClaim(`storage request ${quoted} must be greater than zero`, claim, FIELD),
    };
  }
  if (parsed.value > MAX_INT64) {
    const message = `storage request ${quoted} is ${parsed.value} bytes, ` +
      `more than the largest size CSI can carry (${MAX_INT64} bytes)`;
    return { ok: false, error: atClaim(message, claim, FIELD) };
  }
  return { ok: true, value: parsed.value };
}
