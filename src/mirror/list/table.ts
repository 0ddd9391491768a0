/** Plain aligned text tables for the `airgap mirror list` renderers: a header row, then rows. */

/** Columns padded to their widest cell, two spaces apart, no trailing spaces. */
export function table(header: string[], rows: string[][]): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  return all
    .map((r) =>
      r
        .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** `name (default, deprecated)`: a name with the marks that apply to it. */
export function marked(name: string, marks: (string | false | undefined)[]): string {
  const on = marks.filter((m): m is string => typeof m === 'string' && m !== '');
  return on.length > 0 ? `${name} (${on.join(', ')})` : name;
}
