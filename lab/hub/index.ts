/**
 * The hub simulator, whole: the real CRDs loaded from a directory (never copied into the repo), or
 * where they are not here the simulator's own schemas (own-schemas.ts), the built-in types, an object
 * store seeded with what an OpenShift hub with the multicluster engine already has, the HTTPS API
 * server (bearer token, a certificate from the lab CA), the simulated controllers (HyperShift,
 * metal3, assisted-service, MCE, time-compressed), and a kubeconfig for it.
 * Tests and the demo start one with `startHub`, point airgap (or kubectl) at `kubeconfigFile`, and
 * inject faults through `server.faults` or `controllers` options.
 */
import { join } from 'node:path';
import { writeFileAtomic } from '../../src/util/fs.js';
import { crdDir, realCrdsAbsence, realCrdsHowTo } from '../realdata.js';
import { builtinTypes } from './builtin.js';
import { startControllers, type ControllerOptions, type Controllers } from './controllers/index.js';
import { startGuestApi, startLabApi } from './controllers/guest.js';
import { seedHub } from './controllers/seed.js';
import { loadCrdTypes } from './crds.js';
import { kubeconfigYaml } from './kubeconfig.js';
import { ownSchemaTypes } from './own-schemas.js';
import type { ApiServer } from './server.js';
import { createStore } from './store.js';
import type { HubStore, ResourceType } from './types.js';

let noticeShown = false;

/**
 * The custom resource types the hub serves: the real CRDs of `dir` when given, else of AIRGAP_CRD_DIR
 * or the realdata when they are here; otherwise the simulator's own schemas, which it says once per
 * process on stderr (one line).
 */
export function customResourceTypes(dir?: string): ResourceType[] {
  if (dir !== undefined) return loadCrdTypes(dir);
  const absence = realCrdsAbsence();
  if (absence === undefined) return loadCrdTypes(crdDir());
  if (!noticeShown) {
    noticeShown = true;
    process.stderr.write(
      `hub simulator: validation against the real CRDs is off (${absence}): objects are checked against the simulator's own schemas only; to turn it on, ${realCrdsHowTo()}\n`,
    );
  }
  return ownSchemaTypes();
}

export interface StartHubOptions {
  /** Directory for the kubeconfig (`hub.kubeconfig`, 0600). */
  dir: string;
  /** Listen address: 127.0.0.1 (default), ::1, or another local address. */
  host?: string;
  /** The directory of the real CRDs (default: see customResourceTypes). */
  crdDir?: string;
  /** Controller behaviour and faults (the guest API defaults to one on `host`). */
  controllers?: Omit<ControllerOptions, 'guest'> & { guest?: ControllerOptions['guest'] };
  /** Seed the hub as an OpenShift hub with MCE (default true). */
  seed?: boolean;
}

export interface Hub {
  url: string;
  kubeconfigFile: string;
  /** The lab CA that signed the API server certificate. */
  caPem: string;
  store: HubStore;
  server: ApiServer;
  controllers: Controllers;
  stop(): Promise<void>;
}

export async function startHub(opts: StartHubOptions): Promise<Hub> {
  const host = opts.host ?? '127.0.0.1';
  const store = createStore([...builtinTypes(), ...customResourceTypes(opts.crdDir)]);
  if (opts.seed !== false)
    seedHub(store, {
      ...(opts.controllers?.hubVersion ? { hubVersion: opts.controllers.hubVersion } : {}),
      ...(opts.controllers?.faults ? { faults: opts.controllers.faults } : {}),
    });
  const { server, token, caPem } = await startLabApi(store, host);
  const controllers = startControllers(store, {
    ...opts.controllers,
    guest: opts.controllers?.guest ?? { startApi: () => startGuestApi(host === '::' ? '::1' : host) },
  });
  const kubeconfigFile = join(opts.dir, 'hub.kubeconfig');
  await writeFileAtomic(kubeconfigFile, kubeconfigYaml({ server: server.url, caPem, token, name: 'hub' }), {
    mode: 0o600,
  });
  return {
    url: server.url,
    kubeconfigFile,
    caPem,
    store,
    server,
    controllers,
    async stop() {
      await controllers.stop();
      await server.close();
    },
  };
}
