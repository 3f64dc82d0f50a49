import type { FastifyInstance } from 'fastify';
import type { ClientAddresses } from './client-address.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The client's address by TRUST_PROXY (client-address.ts); `request.ip` is not read anywhere. */
    readonly clientAddress: string;
    /** What per-address budgets and caps count: the IPv4 address, or the IPv6 network. */
    readonly clientNetwork: string;
  }
}

/** Gives every request its client, read once by the one reading the direct paths use too. */
export function decorateClients(app: FastifyInstance, clients: ClientAddresses): void {
  app.decorateRequest('clientAddress', {
    getter() {
      return clients.of(this.raw).address;
    },
  });
  app.decorateRequest('clientNetwork', {
    getter() {
      return clients.of(this.raw).network;
    },
  });
}
