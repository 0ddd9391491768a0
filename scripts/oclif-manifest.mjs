// Write oclif.manifest.json: every command's id, flags, args, summary and examples, read once at
// build time. With it, oclif starts a command by loading that one module; without it, every
// command module (and all they import) is loaded on each start just to find the one asked for.
// @oclif/core's Plugin builds the manifest exactly as `oclif manifest` (the oclif CLI) does.
import { rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { Plugin } from '@oclif/core';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const plugin = new Plugin({ root, type: 'core', ignoreManifest: true, errorOnManifestCreate: true });
await plugin.load();
const out = join(root, 'oclif.manifest.json');
const tmp = `${out}.tmp-${process.pid}`;
await writeFile(tmp, `${JSON.stringify(plugin.manifest, null, 2)}\n`);
await rename(tmp, out);
process.stderr.write(`oclif.manifest.json: ${Object.keys(plugin.manifest.commands).length} commands\n`);
