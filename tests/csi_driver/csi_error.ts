/**
 * A gRPC status the driver answers with, plus the helpers that turn codes
 * into names and back (fault specs accept either).
 */
import { status } from "@grpc/grpc-js";

/** An error that becomes this gRPC status on the wire. */
export class CsiError extends Error {
  readonly code: number;

  constructor(code: number, message: string) {
    super(message);
    this.name = "CsiError";
    this.code = code;
  }
}

/** "RESOURCE_EXHAUSTED" for 8; "CODE_<n>" for a number gRPC does not define. */
export function statusName(code: number): string {
  const name = (status as unknown as Record<number, string | undefined>)[code];
  return name ?? `CODE_${code}`;
}

/**
 * Accepts 8, "8", "RESOURCE_EXHAUSTED", "ResourceExhausted" or "resource_exhausted";
 * returns undefined for anything that is not a gRPC status code 0-16.
 */
export function parseStatusCode(input: number | string): number | undefined {
  if (typeof input === "number") {
    return Number.isInteger(input) && input >= 0 && input <= 16 ? input : undefined;
  }
  if (/^\d+$/.test(input)) return parseStatusCode(Number(input));
  const upper = input.replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
  const code = (status as unknown as Record<string, number | undefined>)[upper];
  return typeof code === "number" ? code : undefined;
}
