import { describe, expect, it } from 'vitest';
import { locationKind, parseLocation, type Location, type LocationRole } from '../../src/mirror/location.js';
import { resolveWorkflow, workflowOf, type WorkflowArguments } from '../../src/mirror/workflow.js';
import { AirgapError } from '../../src/util/errors.js';
import { MirrorError } from '../../src/mirror/errors.js';
import { CommonError } from '../../src/util/errors.js';

/** The usage error `fn` throws: an AirgapError that exits 2. */
function usageErrorOf(fn: () => unknown): AirgapError {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught, 'expected a usage error').toBeInstanceOf(AirgapError);
  const e = caught as AirgapError;
  expect(e.exitCode).toBe(2);
  return e;
}

describe('parseLocation: destinations it accepts', () => {
  const cases: [string, Location][] = [
    [
      'docker://mirror.example.com:8443/ocp',
      { kind: 'registry', registry: 'mirror.example.com:8443', prefix: 'ocp' },
    ],
    ['docker://host:5000/prefix/sub', { kind: 'registry', registry: 'host:5000', prefix: 'prefix/sub' }],
    ['docker://host.example.com', { kind: 'registry', registry: 'host.example.com', prefix: '' }],
    ['docker://host:5000/ocp/', { kind: 'registry', registry: 'host:5000', prefix: 'ocp' }],
    ['docker://[::1]:5000/p', { kind: 'registry', registry: '[::1]:5000', prefix: 'p' }],
    ['docker://localhost', { kind: 'registry', registry: 'localhost', prefix: '' }],
    ['docker://localhost/mirror', { kind: 'registry', registry: 'localhost', prefix: 'mirror' }],
    ['file://dir', { kind: 'directory', path: 'dir' }],
    ['file:///abs/dir', { kind: 'directory', path: '/abs/dir' }],
    ['file://./rel/dir', { kind: 'directory', path: './rel/dir' }],
    ['oci:/path', { kind: 'layout', path: '/path' }],
    ['oci:rel/dir', { kind: 'layout', path: 'rel/dir' }],
    ['oci:///abs/layout', { kind: 'layout', path: '/abs/layout' }],
    ['oci://rel/layout', { kind: 'layout', path: 'rel/layout' }],
    ['oci:/path:ref', { kind: 'layout', path: '/path', refName: 'ref' }],
    ['oci:///abs/layout:v1', { kind: 'layout', path: '/abs/layout', refName: 'v1' }],
  ];
  it.each(cases)('%s', (input, want) => {
    expect(parseLocation(input, 'destination')).toEqual(want);
    expect(locationKind(input)).toBe(want.kind);
  });
});

describe('parseLocation: destinations it refuses', () => {
  const cases: [string, string, string | undefined][] = [
    ['file://', '"file://" names no directory', undefined],
    ['oci:', '"oci:" names no directory', undefined],
    ['oci://', '"oci://" names no directory', undefined],
    ['docker://', '"docker://" does not start with a registry host', 'docker://host[:port][/prefix]'],
    // A first component that cannot be a host would mean docker.io: refused, so a typo stays off Docker Hub.
    [
      'docker://noport',
      '"docker://noport" does not start with a registry host',
      'docker://host[:port][/prefix]',
    ],
    [
      'docker://noport/ocp',
      '"docker://noport/ocp" does not start with a registry host',
      'docker://host[:port][/prefix]',
    ],
    // Without a scheme nothing is guessed: the error says what was likely meant.
    [
      'mirror.example.com:8443/ocp',
      'the destination "mirror.example.com:8443/ocp" has no scheme; write docker://mirror.example.com:8443/ocp for a registry',
      'docker://host[:port][/prefix]',
    ],
    [
      'localhost/mirror',
      'the destination "localhost/mirror" has no scheme; write docker://localhost/mirror for a registry',
      'file://<dir>',
    ],
    [
      '/srv/arch',
      'the destination "/srv/arch" has no scheme; write file:///srv/arch for an archive directory (or oci:/srv/arch for an OCI layout)',
      'oci:<dir>',
    ],
    [
      'noport',
      'the destination "noport" has no scheme; write file://noport for an archive directory (or oci:noport for an OCI layout)',
      'docker://host[:port][/prefix]',
    ],
    [
      'docker://UPPER CASE',
      '"docker://UPPER CASE" does not start with a registry host',
      'docker://host[:port][/prefix]',
    ],
    [
      'docker://host:port/p',
      '"docker://host:port/p" does not start with a registry host',
      'docker://host[:port][/prefix]',
    ],
    [
      'docker://-bad.example.com/p',
      '"docker://-bad.example.com/p" does not start with a registry host',
      'docker://host[:port][/prefix]',
    ],
    // Another transport is not a destination.
    [
      'http://mirror.example.com',
      'the destination "http://mirror.example.com" has the scheme http://, which is not one airgap writes to',
      'docker://host[:port][/prefix]',
    ],
    [
      'docker://host:5000/Upper/sub',
      '"Upper/sub" is not a valid repository path prefix',
      'lowercase path components',
    ],
    ['docker://host:5000/a//b', '"a//b" is not a valid repository path prefix', 'lowercase path components'],
  ];
  it.each(cases)('%s', (input, message, hint) => {
    const e = usageErrorOf(() => parseLocation(input, 'destination'));
    expect(e.code).toBe(MirrorError.LOCATION_INVALID);
    expect(e.message).toBe(message);
    if (hint) expect(e.hint).toContain(hint);
    else expect(e.hint).toBeUndefined();
  });
});

describe('parseLocation: --from and --workspace', () => {
  it.each(['--from', '--workspace'] as const)('%s takes file://<dir>, kept as written', (flag) => {
    expect(parseLocation('file:///tmp/ws', flag)).toEqual({ kind: 'directory', path: '/tmp/ws' });
    expect(parseLocation('file://rel/ws', flag)).toEqual({ kind: 'directory', path: 'rel/ws' });
  });

  it.each([
    ['--from', '/tmp/a'],
    ['--workspace', '/tmp/ws'],
    ['--workspace', 'docker://host:5000'],
    ['--from', 'oci:/layout'],
    ['--from', 'file:/one-slash'],
  ] as const)('%s refuses %s: it is not file://', (flag, input) => {
    const e = usageErrorOf(() => parseLocation(input, flag));
    expect(e.code).toBe(CommonError.FLAG_INVALID);
    expect(e.message).toBe(`${flag} must be a file:// path, got "${input}"`);
    expect(e.hint).toBe(`write it as ${flag} file:///path/to/dir or ${flag} file://relative/dir`);
  });

  it.each(['--from', '--workspace'] as const)('%s refuses file:// with no directory', (flag) => {
    const e = usageErrorOf(() => parseLocation('file://', flag));
    expect(e.code).toBe(CommonError.FLAG_INVALID);
    expect(e.message).toBe(`${flag} names no directory`);
  });
});

describe("parseLocation: mirror verify's archive", () => {
  it.each([
    ['file:///media/usb', '/media/usb'],
    ['file://rel', 'rel'],
    ['/media/usb', '/media/usb'],
    ['rel/dir', 'rel/dir'],
  ])('%s', (input, path) => {
    expect(parseLocation(input, 'archive')).toEqual({ kind: 'directory', path });
  });

  it.each(['', 'file://'])('refuses "%s": no path', (input) => {
    const e = usageErrorOf(() => parseLocation(input, 'archive' satisfies LocationRole));
    expect(e.code).toBe(CommonError.FLAG_INVALID);
    expect(e.message).toBe('the archive path is empty');
  });
});

describe('workflowOf and resolveWorkflow', () => {
  const run = (a: Partial<WorkflowArguments> & { destination: string }) =>
    resolveWorkflow({ config: 'isc.yaml', ...a });

  it('derives each workflow and its directories from the Locations', () => {
    expect(run({ destination: 'docker://host:5000/ocp', workspace: 'file:///ws' })).toEqual({
      mode: 'mirrorToMirror',
      dryRun: false,
      destination: { kind: 'registry', registry: 'host:5000', prefix: 'ocp' },
      workspace: '/ws',
    });
    expect(run({ destination: 'file:///out' })).toEqual({
      mode: 'mirrorToDisk',
      dryRun: false,
      destination: { kind: 'directory', path: '/out' },
      workspace: '/out/working-dir',
    });
    expect(run({ destination: 'docker://host:5000', from: 'file:///usb', config: undefined })).toEqual({
      mode: 'diskToMirror',
      dryRun: false,
      destination: { kind: 'registry', registry: 'host:5000', prefix: '' },
      archiveDir: '/usb',
      workspace: '/usb/working-dir',
    });
    expect(run({ destination: 'oci:///layout', dryRun: true })).toEqual({
      mode: 'mirrorToLayout',
      dryRun: true,
      destination: { kind: 'layout', path: '/layout' },
      workspace: '/layout/.airgap',
    });
    expect(run({ destination: 'file://rel', plan: 'plan.json', config: undefined }).workspace).toBe(
      `${process.cwd()}/rel/working-dir`,
    );
  });

  const refused: [Partial<WorkflowArguments> & { destination: string }, string, string][] = [
    [
      { destination: 'oci:/l', from: 'file:///a' },
      CommonError.FLAG_CONFLICT,
      'an oci: destination cannot be combined with --from or --workspace',
    ],
    [
      { destination: 'file:///b', workspace: 'file:///a' },
      CommonError.FLAG_CONFLICT,
      'a file:// destination cannot be combined with --from or --workspace',
    ],
    [
      { destination: 'docker://h:1', from: 'file:///a', workspace: 'file:///w' },
      CommonError.FLAG_CONFLICT,
      '--from and --workspace cannot be used together',
    ],
    [
      { destination: 'docker://h:1' },
      CommonError.FLAG_MISSING,
      'a docker:// destination needs --workspace (registry to registry) or --from (disk to registry)',
    ],
    [
      { destination: 'file:///b', config: undefined },
      CommonError.FLAG_MISSING,
      'say what to mirror: -c <ImageSetConfiguration> or --plan <plan.json>',
    ],
    [
      { destination: 'file:///b', plan: 'p.json' },
      CommonError.FLAG_CONFLICT,
      '-c and --plan cannot be used together',
    ],
    // The workflow is checked before the Location itself: flags in conflict are named first.
    [
      { destination: 'file://', from: 'file:///a' },
      CommonError.FLAG_CONFLICT,
      'a file:// destination cannot be combined with --from or --workspace',
    ],
    [
      { destination: 'file://', config: undefined },
      CommonError.FLAG_MISSING,
      'say what to mirror: -c <ImageSetConfiguration> or --plan <plan.json>',
    ],
    [{ destination: 'file://' }, MirrorError.LOCATION_INVALID, '"file://" names no directory'],
    [
      { destination: 'docker://noport', workspace: '/ws' },
      MirrorError.LOCATION_INVALID,
      '"docker://noport" does not start with a registry host',
    ],
    [
      { destination: 'docker://h:1', workspace: '/ws' },
      CommonError.FLAG_INVALID,
      '--workspace must be a file:// path, got "/ws"',
    ],
    [{ destination: 'docker://h:1', from: 'file://' }, CommonError.FLAG_INVALID, '--from names no directory'],
  ];
  it.each(refused)('refuses %j: %s', (args, code, message) => {
    const e = usageErrorOf(() => run(args));
    expect(e.code).toBe(code);
    expect(e.message).toBe(message);
    expect(e.hint === undefined || e.hint.length > 0).toBe(true);
  });

  it('workflowOf needs only the kinds of the Locations', () => {
    expect(workflowOf({ destination: 'oci:' })).toBe('mirrorToLayout');
    expect(workflowOf({ destination: 'file://' })).toBe('mirrorToDisk');
    expect(workflowOf({ destination: 'docker://UPPER CASE', workspace: 'x' })).toBe('mirrorToMirror');
    expect(workflowOf({ destination: 'docker://h:1', from: 'x' })).toBe('diskToMirror');
    // A path without a scheme is named as such, not taken for a registry that needs --workspace.
    expect(() => workflowOf({ destination: '/srv/arch' })).toThrow(
      'the destination "/srv/arch" has no scheme; write file:///srv/arch',
    );
  });
});
