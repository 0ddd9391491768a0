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
  const d: number[][] = Array.from({ length: s.length + 1 }, (_, i) =>
    Array.from({ length: t.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= s.length; i++) {
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) {
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[s.length][t.length];
}

/** The closest candidates to `word` (at most two), or none when nothing is close. */
export function suggest(word: string, candidates: readonly string[]): string[] {
  const lower = word.toLowerCase();
  const scored = candidates
    .map((c) => {
      const cl = c.toLowerCase();
      const prefix = lower.length >= 3 && (cl.startsWith(lower) || lower.startsWith(cl));
      const distance = prefix ? Math.min(1, editDistance(word, c)) : editDistance(word, c);
      return { c, distance, ok: prefix || distance <= Math.max(2, Math.floor(c.length / 2)) };
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
