/**
 * podman, as the registry's unit and airgap use it: images loaded from what the user carried (an
 * OCI archive, an OCI layout), never pulled from a network; containers by name. podman reads its
 * own configuration (CONTAINERS_CONF, CONTAINERS_STORAGE_CONF) from the environment.
 */
import { randomBytes } from 'node:crypto';
import { symlink, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { AirgapError } from '../util/errors.js';
import { BastionError } from './errors.js';
import { runHost } from './host.js';

/** Whether podman's storage holds `ref` (exit 1 of `podman image exists` means no; any other failure is one). */
export async function imageExists(ref: string): Promise<boolean> {
  const r = await runHost('podman', ['image', 'exists', ref], BastionError.PODMAN_FAILED, { okCodes: [1] });
  return r.exitCode === 0;
}

/**
 * Load an image from an OCI or docker archive (`podman load`); returns the names podman printed
 * (`Loaded image: localhost/x:1` or `Loaded image(s): sha256:…`).
 */
export async function loadArchive(file: string): Promise<string[]> {
  const r = await runHost('podman', ['load', '--quiet', '--input', file], BastionError.PODMAN_FAILED, {
    hint: `check that ${file} is an image archive (podman save -o file --format oci-archive <image>)`,
  });
  return loadedNames(`${r.stdout}\n${r.stderr}`);
}

/** The names in `podman load`'s output. */
function loadedNames(text: string): string[] {
  const names: string[] = [];
  for (const line of text.split('\n')) {
    const m = /^Loaded image(?:\(s\))?:\s*(.+)$/.exec(line.trim());
    if (m)
      names.push(
        ...m[1]!
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      );
  }
  return names;
}

/**
 * Copy an image out of an OCI layout directory into podman's storage (`podman pull oci:DIR[:NAME]`,
 * no network); returns its image ID. podman names the image after the directory's path and refuses
 * a path with capitals, so it reads the layout through a link of our own naming, and that name is
 * removed again (the caller names the image).
 */
export async function pullLayout(dir: string, refName: string | undefined): Promise<string> {
  const link = join('/tmp', `airgap-layout-${randomBytes(8).toString('hex')}`);
  await symlink(dir, link);
  try {
    const r = await runHost(
      'podman',
      ['pull', '--quiet', `oci:${link}${refName ? `:${refName}` : ''}`],
      BastionError.PODMAN_FAILED,
      {
        hint: `check that ${dir} is an OCI layout${refName ? ` holding ${refName}` : ' with one image (or name it: DIR:NAME)'}`,
      },
    );
    const id = r.stdout.trim().split('\n').at(-1) ?? '';
    await runHost('podman', ['untag', id, `localhost${link}:latest`], BastionError.PODMAN_FAILED, {
      okCodes: [125],
    });
    return id;
  } catch (e) {
    if (e instanceof AirgapError)
      throw new AirgapError(e.code, e.message.replaceAll(link, dir), {
        ...(e.hint ? { hint: e.hint } : {}),
        cause: e,
      });
    throw e;
  } finally {
    await unlink(link);
  }
}

/** Give the image `from` (a name or ID) the name `to`. */
export async function tagImage(from: string, to: string): Promise<void> {
  await runHost('podman', ['tag', from, to], BastionError.PODMAN_FAILED);
}

/** Remove the container `name` if there is one (a stopped unit's `--rm` container, a crash's leftover). */
export async function removeContainer(name: string): Promise<void> {
  await runHost('podman', ['rm', '--force', '--ignore', name], BastionError.PODMAN_FAILED);
}

/** Whether a container `name` runs now. */
export async function containerRunning(name: string): Promise<boolean> {
  const r = await runHost(
    'podman',
    ['ps', '--filter', `name=^${name}$`, '--format', '{{.Names}}'],
    BastionError.PODMAN_FAILED,
  );
  return r.stdout.split('\n').some((l) => l.trim() === name);
}

/** `podman run --rm … image args…` to completion (garbage-collect); its output. */
export async function runOnce(
  args: string[],
  o: { timeoutMs?: number } = {},
): Promise<{ stdout: string; stderr: string; exitCode: number }> {
  const r = await runHost('podman', ['run', '--rm', ...args], BastionError.PODMAN_FAILED, {
    okCodes: Array.from({ length: 255 }, (_, i) => i + 1),
    ...(o.timeoutMs ? { timeoutMs: o.timeoutMs } : {}),
  });
  return { stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode ?? 1 };
}
