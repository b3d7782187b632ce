/** How explain words sizes and times. */

const UNITS = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];

/** 5368709120 → "5Gi", 1610612736 → "1.5Gi", 1000 → "1000". */
export function sizeText(bytes: bigint): string {
  if (bytes < 0n) return `-${sizeText(-bytes)}`;
  let unit = 0;
  let scale = 1n;
  while (unit < UNITS.length - 1 && bytes >= scale * 1024n) {
    scale *= 1024n;
    unit++;
  }
  if (bytes % scale === 0n) return `${bytes / scale}${UNITS[unit]}`;
  const tenths = (bytes * 10n + scale / 2n) / scale;
  return `${tenths / 10n}.${tenths % 10n}${UNITS[unit]}`;
}

/** How long ago `time` was, at `now`: "12s ago", "5m ago", "3h ago", "2d ago". */
export function ageText(time: string, now: string): string {
  const ms = Date.parse(now) - Date.parse(time);
  if (!Number.isFinite(ms)) return "at an unknown time";
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 120) return `${seconds}s ago`;
  if (seconds < 7200) return `${Math.round(seconds / 60)}m ago`;
  if (seconds < 172800) return `${Math.round(seconds / 3600)}h ago`;
  return `${Math.round(seconds / 86400)}d ago`;
}

/** "a, b and c". */
export function listText(items: readonly string[]): string {
  if (items.length <= 1) return items.join("");
  return `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`;
}
