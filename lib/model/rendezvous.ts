/**
 * The one agent among several that acts on a key, with no coordination but a
 * shared view: the NotEnoughCapacity summary of a claim, the withdrawal of a
 * gone agent's capacity. Pure.
 */

/**
 * Rendezvous (highest random weight) hashing: every agent that knows the
 * same candidates picks the same one for a key, and a candidate that comes
 * or goes moves only the keys it wins or held.
 */
export function rendezvous(key: string, candidates: readonly string[]): string | undefined {
  let best: { candidate: string; score: number } | undefined;
  for (const candidate of candidates) {
    const score = hash53(`${key}\n${candidate}`);
    if (
      best === undefined || score > best.score ||
      (score === best.score && candidate < best.candidate)
    ) {
      best = { candidate, score };
    }
  }
  return best?.candidate;
}

/** A 53-bit string hash (two multiplicative 32-bit lanes mixed at the end; bryc's cyrb53). */
function hash53(text: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ code, 2654435761);
    h2 = Math.imul(h2 ^ code, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/** The `count` candidates rendezvous hashing ranks highest for `key` (all of them when fewer). */
export function rendezvousTop(key: string, candidates: readonly string[], count: number): string[] {
  return [...new Set(candidates)]
    .map((candidate) => ({ candidate, score: hash53(`${key}\n${candidate}`) }))
    .sort((a, b) => b.score - a.score || (a.candidate < b.candidate ? -1 : 1))
    .slice(0, count)
    .map((entry) => entry.candidate);
}
