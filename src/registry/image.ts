/**
 * The registry image in podman's storage, from what the user carried across: an OCI (or docker)
 * archive (`podman save -o registry.tar --format oci-archive <image>` on a connected host), or an
 * OCI layout directory (one `airgap mirror` wrote, `DIR` or `DIR:NAME`). Never pulled: the unit
 * runs it with --pull never. Loaded only when podman does not have it.
 */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { formatReference, parseReference } from '../mirror/index.js';
import { usageError } from '../util/errors.js';
import { isNotFound } from '../util/fs.js';
import { BastionError } from './errors.js';
import { shellWords } from './host.js';
import { imageExists, loadArchive, pullLayout, tagImage } from './podman.js';
import type { InstallStep } from './install.js';

export interface ImageSource {
  /** The reference the unit runs. */
  ref: string;
  kind: 'archive' | 'layout';
  path: string;
  /** The ref name inside a layout (`DIR:NAME`). */
  refName?: string;
  /** The podman command that loads it. */
  command: string;
}

async function kindOf(path: string, flag: string): Promise<'file' | 'dir'> {
  try {
    const s = await stat(path);
    if (s.isDirectory()) return 'dir';
    if (s.isFile()) return 'file';
  } catch (e) {
    if (!isNotFound(e)) throw e;
    throw usageError(BastionError.IMAGE_SOURCE_INVALID, `${flag} ${path} does not exist`, {
      where: path,
      hint: 'give the file or directory you carried across (podman save -o registry.tar --format oci-archive <image>)',
    });
  }
  throw usageError(BastionError.IMAGE_SOURCE_INVALID, `${flag} ${path} is neither a file nor a directory`, {
    where: path,
  });
}

/**
 * `DIR` or `DIR:NAME`, where NAME is an entry's ref name and may hold ':' and '/' itself
 * (`airgap mirror` names entries `<repo>:<tag>`): the directory is the shortest prefix before a ':'
 * that is one.
 */
async function splitLayout(layout: string): Promise<{ path: string; refName?: string }> {
  for (let i = layout.indexOf(':'); i > 0; i = layout.indexOf(':', i + 1)) {
    const dir = resolve(layout.slice(0, i));
    const s = await stat(dir).catch((e: unknown) => {
      if (isNotFound(e)) return undefined;
      throw e;
    });
    if (s?.isDirectory()) return { path: dir, refName: layout.slice(i + 1) };
  }
  const path = resolve(layout);
  if ((await kindOf(path, '--image-layout')) !== 'dir')
    throw usageError(BastionError.IMAGE_SOURCE_INVALID, `--image-layout ${path} is a file`, {
      hint: 'an archive file goes to --image-archive',
    });
  return { path };
}

/**
 * Where the image comes from: undefined when podman has it already; else the archive or layout,
 * checked; IMAGE_MISSING (exit 2) when podman lacks it and nothing was given.
 */
export async function imageSource(
  imageIn: string | undefined,
  archive: string | undefined,
  layout: string | undefined,
): Promise<ImageSource | undefined> {
  const ref = formatReference(parseReference(imageIn ?? 'docker.io/library/registry:2'));
  if (archive && layout)
    throw usageError(
      BastionError.IMAGE_SOURCE_INVALID,
      '--image-archive and --image-layout cannot be given together',
      {
        hint: 'give the one you carried across',
      },
    );
  if (await imageExists(ref)) return undefined;
  if (archive) {
    const path = resolve(archive);
    if ((await kindOf(path, '--image-archive')) !== 'file')
      throw usageError(BastionError.IMAGE_SOURCE_INVALID, `--image-archive ${path} is a directory`, {
        hint: 'an OCI layout directory goes to --image-layout',
      });
    return { ref, kind: 'archive', path, command: shellWords('podman', ['load', '--input', path]) };
  }
  if (layout) {
    const { path, refName } = await splitLayout(layout);
    return {
      ref,
      kind: 'layout',
      path,
      ...(refName ? { refName } : {}),
      command: shellWords('podman', ['pull', `oci:${path}${refName ? `:${refName}` : ''}`]),
    };
  }
  throw usageError(BastionError.IMAGE_MISSING, `podman has no image ${ref}, and the bastion cannot pull it`, {
    hint: `on a connected host: podman pull ${ref} && podman save -o registry.tar --format oci-archive ${ref}; carry registry.tar across and give --image-archive registry.tar`,
  });
}

/** Load the image when needed, named as the unit runs it. */
export async function ensureImage(ref: string, source: ImageSource | undefined): Promise<InstallStep> {
  if (!source) return { step: 'image', status: 'unchanged', message: `podman has ${ref}` };
  const loaded =
    source.kind === 'archive'
      ? await loadArchive(source.path)
      : [await pullLayout(source.path, source.refName)];
  if (!loaded.includes(ref) && !(await imageExists(ref))) {
    const from = loaded.find(Boolean);
    if (!from)
      throw usageError(
        BastionError.IMAGE_SOURCE_INVALID,
        `${source.path} loaded no image podman could name`,
        {
          where: source.path,
          hint: 'save it again with podman save -o registry.tar --format oci-archive <image>',
        },
      );
    await tagImage(from, ref);
  }
  return {
    step: 'image',
    status: 'changed',
    message: `loaded ${ref} from ${source.path}`,
    commands: [source.command],
  };
}
