/**
 * The registry endpoints of one run, one per registry and role: every image of a registry shares
 * its connections, credentials and blob cache, and a registry that is both a source and the
 * destination gets two (each with its own TLS setting). Closed together when the run ends.
 *
 * With a registries configuration (registries.conf), source reads are redirected as podman and
 * skopeo redirect them: through the mirrors of the table matching the image, then its location.
 * The mirrors' own clients (role `mirror`) read where they are told, never redirected again.
 */
import { isAirgapError, messageOf } from '../../util/errors.js';
import { RegistryClient, type RegistryClientOptions } from '../registry/client.js';
import type { ReadRedirect, ReadRedirector, ReadRoute, ReadTry } from '../registry/redirect.js';
import { MirrorError } from '../errors.js';
import { RegistryEndpoint } from './endpoints.js';
import type { Journal } from './journal.js';

/** Failures after which a mirror is not tried again in the run: it is not there for us. */
const GIVE_UP = new Set<string>([
  MirrorError.REGISTRY_NETWORK,
  MirrorError.REGISTRY_UNREACHABLE,
  MirrorError.REGISTRY_NOT_ANSWERING,
  MirrorError.REGISTRY_STALLED,
  MirrorError.REGISTRY_TLS,
  MirrorError.REGISTRY_UNAUTHORIZED,
  MirrorError.REGISTRY_AUTH_FAILED,
]);

export class ClientPool {
  private readonly clients = new Map<string, RegistryEndpoint>();
  private readonly redirector?: ReadRedirector;

  constructor(
    private readonly base: RegistryClientOptions,
    private readonly journal?: Journal,
    redirect?: { redirect: ReadRedirect; sourceInsecure: boolean },
  ) {
    if (redirect && redirect.redirect.conf.tables.length > 0)
      this.redirector = this.redirectorOf(redirect.redirect, redirect.sourceInsecure);
  }

  get(registry: string, role: 'source' | 'destination' | 'mirror', insecure: boolean): RegistryEndpoint {
    const key = `${role}|${registry}|${insecure}`;
    let ep = this.clients.get(key);
    if (!ep) {
      ep = new RegistryEndpoint(
        new RegistryClient(registry, {
          ...this.base,
          insecureSkipVerify: insecure,
          ...(role === 'source' && this.redirector ? { redirect: this.redirector } : {}),
        }),
        this.journal,
      );
      this.clients.set(key, ep);
    }
    return ep;
  }

  /** Reads redirected by `redirect`, with what the run learns: which mirrors served, which do not answer. */
  private redirectorOf(redirect: ReadRedirect, sourceInsecure: boolean): ReadRedirector {
    const givenUp = new Set<string>();
    const said = new Set<string>();
    const notice = (message: string) => this.base.onNotice?.(message);
    const label = (t: ReadTry) => `${t.client.registry}/${t.repo}`;
    return {
      route: (registry, repo, byDigest): ReadRoute | undefined => {
        const plan = redirect.plan(registry, repo, byDigest);
        if (!plan) return undefined;
        if ('blocked' in plan) return { blocked: plan.blocked.where };
        return {
          tries: plan.candidates.map((c) => ({
            client: this.get(c.registry, 'mirror', c.insecure || sourceInsecure).client,
            repo: c.repository,
            mirror: c.mirror,
          })),
        };
      },
      skip: (t) => t.mirror && givenUp.has(t.client.registry),
      served: (t) => {
        if (!t.mirror || said.has(t.client.registry)) return;
        said.add(t.client.registry);
        notice(`reading through the mirror ${t.client.registry} (registries.conf), e.g. ${label(t)}`);
      },
      failed: (t, e) => {
        if (isAirgapError(e) && GIVE_UP.has(e.code) && !givenUp.has(t.client.registry)) {
          givenUp.add(t.client.registry);
          notice(
            `the mirror ${t.client.registry} (registries.conf) cannot be read: ${messageOf(e).split('\n')[0]}; reading from the next place for the rest of the run`,
          );
        }
      },
    };
  }

  async close(): Promise<void> {
    await Promise.all([...this.clients.values()].map((c) => c.close()));
  }
}
