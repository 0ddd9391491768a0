/**
 * A deterministic tar writer for image layers built in memory (the rebuilt catalog's `/configs`
 * layer, lab images): entries in the order given, root-owned, one fixed mtime, so the same entries
 * always give the same bytes and therefore the same layer digest.
 */
import { Header, Pax } from 'tar';

/** One entry of a tar layer written by {@link writeTar}. */
export interface TarEntry {
  /** Relative path (no leading slash); directories may end with `/`. */
  path: string;
  type: 'File' | 'Directory' | 'SymbolicLink';
  data?: Buffer;
  /** Default 0644 for files, 0755 for directories. */
  mode?: number;
  linkpath?: string;
}

/**
 * A deterministic tar: entries in the given order, uid/gid 0, uname/gname root, the given mtime.
 * Paths too long for ustar get a PAX header.
 */
export function writeTar(entries: readonly TarEntry[], mtime: Date = new Date(0)): Buffer {
  const blocks: Buffer[] = [];
  for (const e of entries) {
    const dir = e.type === 'Directory';
    const p = dir ? `${e.path.replace(/\/+$/, '')}/` : e.path;
    const data = e.data ?? Buffer.alloc(0);
    const fields = {
      path: p,
      mode: e.mode ?? (dir ? 0o755 : 0o644),
      uid: 0,
      gid: 0,
      uname: 'root',
      gname: 'root',
      size: e.type === 'File' ? data.length : 0,
      mtime,
      type: e.type,
      ...(e.linkpath ? { linkpath: e.linkpath } : {}),
    };
    const header = Buffer.alloc(512);
    const h = new Header(fields);
    h.encode(header, 0);
    if (h.needPax) {
      blocks.push(new Pax({ path: p, ...(e.linkpath ? { linkpath: e.linkpath } : {}), mtime }).encode());
      const short = new Header({ ...fields, path: p.slice(-99), linkpath: e.linkpath?.slice(-99) });
      header.fill(0);
      short.encode(header, 0);
    }
    blocks.push(header);
    if (e.type === 'File' && data.length > 0) {
      blocks.push(data, Buffer.alloc((512 - (data.length % 512)) % 512));
    }
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}
