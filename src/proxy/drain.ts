/**
 * A replica's way out (docs/scaling.md, Drains): on SIGTERM it stops accepting connections, says
 * so on `/readyz` (a balancer takes it out), answers any new request on a kept-alive connection
 * with `shutting_down` (503, `connection: close`: the client or balancer retries elsewhere), lets
 * the requests in flight (streams) finish within a grace period, then cuts what is left.
 */
import type { Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { ProxyError } from '../core/errors.js';

/** Routes a drain still answers: a balancer's probes and Prometheus see the replica leave. */
const PROBES = new Set(['/readyz', '/healthz', '/metrics']);

export class Drain {
  #draining = false;
  #inFlight = 0;
  #idle: (() => void) | undefined;

  get draining(): boolean {
    return this.#draining;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** Counts each request until its response is closed (a hijacked stream's too); refuses new ones while draining. */
  register(app: FastifyInstance): void {
    app.addHook('onRequest', async (req, reply) => {
      if (this.#draining && !PROBES.has(req.routeOptions.url ?? '')) {
        void reply.header('connection', 'close');
        throw new ProxyError('shutting_down');
      }
      this.#inFlight++;
      reply.raw.once('close', () => {
        this.#inFlight--;
        if (this.#inFlight === 0) this.#idle?.();
      });
    });
  }

  /**
   * Stops accepting, waits for the requests in flight (at most `graceMs`), then closes every
   * connection left. Resolves with how many requests were in flight when it began, and how many were cut.
   */
  async drain(server: Server, graceMs: number): Promise<{ waited: number; cut: number }> {
    this.#draining = true;
    const waited = this.#inFlight;
    server.close();
    server.closeIdleConnections();
    if (this.#inFlight > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, graceMs);
        this.#idle = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    const cut = this.#inFlight;
    server.closeAllConnections();
    return { waited, cut };
  }
}
