/**
 * The index of a served directory, only when the app has `directoryListing` on (static.ts answers
 * 404 for a directory otherwise): an HTML page (names escaped) or JSON (`?format=json`, or an
 * Accept header that asks for JSON and not HTML), with the name, type, size and mtime of each
 * entry. Hidden names are left out, and symlinks are listed only when they stay inside the root,
 * as they are served.
 */
import type http from 'node:http';
import { readdir, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fsFailure, isInside, parseTarget } from './paths.js';
import { fail, type Ctx, type Req } from './request.js';

/** One entry of a directory index. */
export interface IndexEntry {
  name: string;
  type: 'file' | 'directory';
  size: number;
  /** ISO 8601, UTC. */
  mtime: string;
}

/** What `?format=json` returns for a directory. */
export interface DirectoryIndex {
  path: string;
  entries: IndexEntry[];
}

async function listDirectory(ctx: Ctx, dir: string): Promise<IndexEntry[]> {
  const names = (await readdir(dir)).filter((n) => !n.startsWith('.'));
  const entries = await Promise.all(
    names.map(async (name): Promise<IndexEntry | undefined> => {
      const p = join(dir, name);
      try {
        // Symlinks are listed only when they stay inside the root, like they are served.
        const real = await realpath(p);
        if (!isInside(ctx.root, real)) return undefined;
        const st = await stat(real);
        if (!st.isFile() && !st.isDirectory()) return undefined;
        return {
          name,
          type: st.isDirectory() ? 'directory' : 'file',
          size: st.isDirectory() ? 0 : st.size,
          mtime: st.mtime.toISOString(),
        };
      } catch {
        // An entry that cannot be resolved or looked at (a dangling or looping link, no permission)
        // cannot be served either: it is left out of the listing, as it is refused when asked for.
        return undefined;
      }
    }),
  );
  return entries
    .filter((e): e is IndexEntry => e !== undefined)
    .sort((a, b) =>
      a.type === b.type ? (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) : a.type === 'directory' ? -1 : 1,
    );
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function wantsJson(req: http.IncomingMessage, query: string): boolean {
  const format = new URLSearchParams(query).get('format');
  if (format === 'json') return true;
  if (format === 'html') return false;
  const accept = (req.headers.accept ?? '').toLowerCase();
  return accept.includes('application/json') && !accept.includes('text/html');
}

function formatSize(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${v} B` : `${v.toFixed(1)} ${units[u]}`;
}

function indexHtml(urlPath: string, entries: IndexEntry[]): string {
  const title = `Index of ${escapeHtml(urlPath)}`;
  const rows = entries.map((e) => {
    const href = encodeURIComponent(e.name) + (e.type === 'directory' ? '/' : '');
    const label = escapeHtml(e.name) + (e.type === 'directory' ? '/' : '');
    const size = e.type === 'directory' ? '-' : formatSize(e.size);
    return `<tr><td><a href="${href}">${label}</a></td><td>${size}</td><td>${e.mtime}</td></tr>`;
  });
  const up = urlPath === '/' ? '' : '<tr><td><a href="../">../</a></td><td></td><td></td></tr>';
  return [
    '<!DOCTYPE html>',
    '<html><head><meta charset="utf-8">',
    `<title>${title}</title>`,
    '<style>body{font-family:sans-serif}td{padding:0 1em 0 0}</style>',
    `</head><body><h1>${title}</h1>`,
    '<table><tr><th align="left">Name</th><th align="left">Size</th><th align="left">Modified (UTC)</th></tr>',
    up,
    ...rows,
    '</table></body></html>',
    '',
  ].join('\n');
}

function parseTargetSegments(path: string): string[] {
  const t = parseTarget(path);
  return t.ok ? t.segments : [];
}

/** Answer with the index of the directory `dir` (a real path inside the root), HTML or JSON. */
export async function sendIndex(rr: Req, ctx: Ctx, dir: string, query: string): Promise<void> {
  let entries: IndexEntry[];
  try {
    entries = await listDirectory(ctx, dir);
  } catch (e) {
    const [status, problem] = fsFailure(e, 'listing the directory');
    return fail(rr, status, problem);
  }
  // The path as the client wrote it is only used once decoded and escaped.
  const segments = parseTargetSegments(rr.path);
  const urlPath = segments.length ? `/${segments.join('/')}/` : '/';
  const json = wantsJson(rr.req, query);
  const body = Buffer.from(
    json
      ? `${JSON.stringify({ path: urlPath, entries } satisfies DirectoryIndex, null, 2)}\n`
      : indexHtml(urlPath, entries),
  );
  rr.res.writeHead(200, {
    'Content-Type': json ? 'application/json; charset=utf-8' : 'text/html; charset=utf-8',
    'Content-Length': String(body.length),
    'Cache-Control': 'no-cache',
    Vary: 'Accept',
    'X-Content-Type-Options': 'nosniff',
  });
  if (rr.req.method === 'HEAD') {
    rr.res.end();
    return;
  }
  rr.bytes = body.length;
  rr.res.end(body);
}
