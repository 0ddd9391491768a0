/**
 * The registry endpoints of one run, one per registry and role: every image of a registry shares
 * its connections, credentials and blob cache, and a registry that is both a source and the
 * destination gets two (each with its own TLS setting). Closed together when the run ends.
 */
import { RegistryClient, type RegistryClientOptions } from '../registry/client.js';
import { RegistryEndpoint } from './endpoints.js';
import type { Journal } from './journal.js';

export class ClientPool {
  private readonly clients = new Map<string, RegistryEndpoint>();

  constructor(
    private readonly base: RegistryClientOptions,
    private readonly journal?: Journal,
  ) {}

  get(registry: string, role: 'source' | 'destination', insecure: boolean): RegistryEndpoint {
    const key = `${role}|${registry}`;
    let ep = this.clients.get(key);
    if (!ep) {
      ep = new RegistryEndpoint(
        new RegistryClient(registry, { ...this.base, insecureSkipVerify: insecure }),
        this.journal,
      );
      this.clients.set(key, ep);
    }
    return ep;
  }

  async close(): Promise<void> {
    await Promise.all([...this.clients.values()].map((c) => c.close()));
  }
}
