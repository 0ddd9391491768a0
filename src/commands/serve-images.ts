import { createWriteStream, type WriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Flags } from '@oclif/core';
import { AirgapCommand, REPEATABLE } from '../cli/command.js';
import { usageError, CommonError } from '../util/errors.js';
import { DEFAULT_GRACE_MS, DEFAULT_PORT, serveImages, type RunningImageServer } from '../server/index.js';

export default class ServeImages extends AirgapCommand {
  static override summary =
    'Serve the boot images (RHCOS ISO, rootfs, kernel, initramfs) over HTTP or HTTPS, read-only, for assisted-service.';

  static override description = `Serves every file under --dir, read-only: GET and HEAD, byte ranges (one or several), ETag and Last-Modified with conditional requests, and /healthz. Directories are not listed (404) unless --directory-listing is given: then each has an HTML or JSON index (?format=json). Every download reads into its own 256 KiB buffer, so a client that reads slowly or stops reading holds only that and never delays the others. Nothing outside --dir is ever served: "..", encoded slashes, NUL bytes and symlinks that lead out are refused, and so are names starting with a dot (files still being written). By default it listens on IPv4 and IPv6 on every address of this host; --address (repeatable) limits it to the IPv4 or IPv6 addresses given, or to the addresses a host name resolves to. With --tls-cert and --tls-key (from \`airgap certs issue\`) it serves HTTPS. The access log (combined log format) goes to stderr. It runs until SIGTERM or Ctrl-C, then stops accepting connections and lets downloads in flight finish for up to --grace-period seconds.`;

  static override examples = [
    {
      description: 'Serve ./boot (the images are under ./boot/images/) on port 8080, IPv4 and IPv6:',
      command: '<%= config.bin %> serve-images --dir ./boot',
    },
    {
      description: 'HTTPS on the bastion address only, with a certificate from airgap certs issue:',
      command:
        '<%= config.bin %> serve-images --dir ./boot --address 192.168.126.1 --address 2620:52:0:1306::1 --port 8443 --tls-cert ./pki/web/fullchain.crt --tls-key ./pki/web/tls.key',
    },
  ];

  static override flags = {
    dir: Flags.string({
      char: 'd',
      description: 'The directory to serve (URLs are paths below it, e.g. /images/<file>).',
      required: true,
    }),
    port: Flags.integer({
      char: 'p',
      description: 'The TCP port (0 picks a free one).',
      default: DEFAULT_PORT,
      min: 0,
      max: 65535,
    }),
    address: Flags.string({
      char: 'a',
      description:
        'Listen on this IPv4 or IPv6 address, or on every address of this host name (repeatable). Default: every address, IPv4 and IPv6.',
      ...REPEATABLE,
    }),
    'tls-cert': Flags.string({
      description: 'PEM certificate to serve HTTPS with (fullchain.crt from `airgap certs issue`).',
      dependsOn: ['tls-key'],
    }),
    'tls-key': Flags.string({
      description: 'PEM private key of --tls-cert (tls.key).',
      dependsOn: ['tls-cert'],
    }),
    'access-log': Flags.string({
      description: 'Append the access log to this file instead of stderr.',
      exclusive: ['quiet'],
    }),
    quiet: Flags.boolean({ char: 'q', description: 'No access log.' }),
    'directory-listing': Flags.boolean({
      description:
        'List the files of each directory (an HTML page, or JSON with ?format=json). Default: off, a directory answers 404 (nginx without autoindex lists nothing either).',
    }),
    'grace-period': Flags.integer({
      description: 'Seconds downloads in flight may take to finish after SIGTERM or Ctrl-C.',
      default: DEFAULT_GRACE_MS / 1000,
      min: 0,
    }),
    json: Flags.boolean({
      description: 'Print where it serves as one JSON document on stdout (the access log stays on stderr).',
    }),
    'asc-out': Flags.string({
      description:
        'Write the AgentServiceConfig osImages entries for the boot images served (from `airgap images fetch`), as a merge patch, after checking each URL answers.',
    }),
    'public-url': Flags.string({
      description:
        'The URL hosts and pods reach this server at, for the osImages entries (default: the first URL printed). IPv6 in brackets: http://[2620:52::1]:8080.',
    }),
    'openshift-version': Flags.string({
      description: 'The OpenShift x.y of the boot images, when the images manifest does not say.',
    }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(ServeImages);
    // Signals that arrive while starting are honoured once the server is up.
    const stop = waitForSignal();
    const log = await openAccessLog(flags['access-log'], flags.quiet);
    let server: RunningImageServer;
    try {
      server = await serveImages({
        dir: flags.dir,
        port: flags.port,
        ...(flags.address?.length ? { addresses: flags.address } : {}),
        ...(flags['tls-cert'] && flags['tls-key']
          ? { tls: { certFile: flags['tls-cert'], keyFile: flags['tls-key'] } }
          : {}),
        ...(log ? { accessLog: log.write } : {}),
        ...(flags['directory-listing'] ? { directoryListing: true } : {}),
      });
    } catch (e) {
      stop.cancel();
      await log?.end();
      throw e;
    }
    for (const w of server.warnings) process.stderr.write(`warning: ${w}\n`);
    if (flags.json) {
      this.printJson({
        root: server.root,
        port: server.port,
        tls: server.tls,
        bindings: server.bindings,
        urls: server.urls,
        warnings: server.warnings,
      });
    } else {
      const where = server.bindings
        .map((b) =>
          b.dualStack
            ? 'IPv4 and IPv6 on every address'
            : b.address === '0.0.0.0'
              ? 'IPv4 on every address'
              : b.address === '::'
                ? 'IPv6 on every address'
                : b.family === 'IPv6'
                  ? `[${b.address}]`
                  : b.address,
        )
        .join(', ');
      process.stdout.write(
        `serving ${server.root} read-only over ${server.tls ? 'HTTPS' : 'HTTP'} on ${where}, port ${server.port}:\n` +
          server.urls.map((u) => `  ${u}\n`).join(''),
      );
    }
    if (flags['asc-out'] || flags['public-url']) {
      const { writeOsImages } = await import('../server/index.js');
      try {
        const r = await writeOsImages({
          dir: server.root,
          servedUrls: server.urls.map((u) => u.replace(/\/$/, '')),
          ...(flags['public-url'] ? { publicUrl: flags['public-url'] } : {}),
          ...(flags['openshift-version'] ? { openshiftVersion: flags['openshift-version'] } : {}),
          ...(flags['tls-cert'] ? { ca: await readFile(flags['tls-cert'], 'utf8') } : {}),
          ...(flags['asc-out'] ? { out: flags['asc-out'] } : {}),
        });
        process.stderr.write(
          `osImages (checked, every URL answers)${r.file ? `, written to ${r.file}` : ''}:\n` +
            r.entries
              .map((e) => `  ${e.cpuArchitecture} ${e.openshiftVersion} ${e.version} ${e.url}\n`)
              .join(''),
        );
      } catch (e) {
        await server.close(0);
        stop.cancel();
        await log?.end();
        throw e;
      }
    }
    const graceMs = flags['grace-period'] * 1000;
    process.stderr.write(
      `serve-images: running; stop with Ctrl-C or SIGTERM (downloads in flight get ${flags['grace-period']} s to finish)\n`,
    );
    const signal = await stop.promise;
    process.stderr.write(`serve-images: ${signal}: no new connections; waiting for downloads in flight\n`);
    // A second signal cuts the downloads still in flight.
    const again = waitForSignal();
    void again.promise.then((s) => {
      process.stderr.write(`serve-images: ${s} again: closing every connection now\n`);
      void server.close(0);
    });
    const { forced } = await server.close(graceMs);
    again.cancel();
    await log?.end();
    const how = forced ? 'downloads still in flight were cut' : 'no download was cut';
    process.stderr.write(`serve-images: stopped (${how})\n`);
  }
}

/** A promise of the next SIGTERM or SIGINT, and a way to stop listening for it. */
function waitForSignal(): { promise: Promise<NodeJS.Signals>; cancel: () => void } {
  let on: (s: NodeJS.Signals) => void = () => undefined;
  const promise = new Promise<NodeJS.Signals>((resolve) => {
    on = (s) => {
      cancel();
      resolve(s);
    };
    process.on('SIGTERM', on);
    process.on('SIGINT', on);
  });
  const cancel = () => {
    process.removeListener('SIGTERM', on);
    process.removeListener('SIGINT', on);
  };
  return { promise, cancel };
}

/** The access log sink: stderr, a file (appended), or none with --quiet. */
async function openAccessLog(
  file: string | undefined,
  quiet: boolean,
): Promise<{ write: (line: string) => void; end: () => Promise<void> } | undefined> {
  if (quiet) return undefined;
  if (!file)
    return {
      write: (line) => process.stderr.write(`${line}\n`),
      end: async () => undefined,
    };
  const stream: WriteStream = createWriteStream(file, { flags: 'a', mode: 0o640 });
  await new Promise<void>((resolve, reject) => {
    stream.once('open', () => resolve());
    stream.once('error', (e) =>
      reject(
        usageError(CommonError.ACCESS_LOG_UNWRITABLE, `cannot open the access log ${file}: ${e.message}`, {
          where: `--access-log ${file}`,
          hint: 'give a file in a directory that exists and that this user can write',
        }),
      ),
    );
  });
  return {
    write: (line) => stream.write(`${line}\n`),
    end: () => new Promise<void>((resolve) => stream.end(() => resolve())),
  };
}
