/**
 * "Did you mean …?" for a misspelt key or value: the closest of the allowed words by edit
 * distance, so a hint can name the field the person meant (`tagret` → `targetTag`).
 */

/**
 * Optimal string alignment distance (Levenshtein plus adjacent transpositions), case-insensitive.
 */
export function editDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  const w = t.length + 1;
  // One flat (s.length + 1) × (t.length + 1) table, row i at i * w.
  const d = new Uint32Array((s.length + 1) * w);
  for (let j = 0; j <= t.length; j++) d[j] = j;
  for (let i = 1; i <= s.length; i++) {
    d[i * w] = i;
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let v = Math.min(d[(i - 1) * w + j]! + 1, d[i * w + j - 1]! + 1, d[(i - 1) * w + j - 1]! + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) {
        v = Math.min(v, d[(i - 2) * w + j - 2]! + 1);
      }
      d[i * w + j] = v;
    }
  }
  return d[s.length * w + t.length]!;
}

/** The closest candidates to `word` (at most two), or none when nothing is close. */
export function suggest(word: string, candidates: readonly string[]): string[] {
  const lower = word.toLowerCase();
  const scored = candidates
    .map((c) => {
      const cl = c.toLowerCase();
      const limit = Math.max(2, Math.floor(c.length / 2));
      const prefix = lower.length >= 3 && (cl.startsWith(lower) || lower.startsWith(cl));
      // The distance is at least the difference in length: a word much longer or shorter than a
      // candidate (a hostile key can be megabytes long) is not compared letter by letter.
      const distance = prefix
        ? lower === cl
          ? 0
          : 1
        : Math.abs(lower.length - cl.length) > limit
          ? Infinity
          : editDistance(word, c);
      return { c, distance, ok: prefix || distance <= limit };
    })
    .filter((s) => s.ok && s.distance < Math.max(word.length, 1));
  if (scored.length === 0) return [];
  const best = Math.min(...scored.map((s) => s.distance));
  return scored
    .filter((s) => s.distance === best)
    .map((s) => s.c)
    .slice(0, 2);
}

/** `did you mean x?` / `did you mean x or y?`, or undefined. */
export function didYouMean(word: string, candidates: readonly string[]): string | undefined {
  const found = suggest(word, candidates);
  return found.length > 0 ? `did you mean ${found.join(' or ')}?` : undefined;
}
