/**
 * Keys without restarts (docs/scaling.md): every few seconds a replica asks the store whether its
 * keys changed (one number) and, when they did, loads them into the client auth. A store it cannot
 * reach keeps the keys it had: a database outage does not lock every client out.
 */
import type { KeyStore } from '../store/types.js';
import type { ClientAuth } from './client-auth.js';

export class KeyRefresh {
  readonly #keys: KeyStore;
  readonly #auth: ClientAuth;
  readonly #warn: (line: string) => void;
  #version = -1;
  #timer: NodeJS.Timeout | undefined;

  constructor(keys: KeyStore, auth: ClientAuth, warn: (line: string) => void) {
    this.#keys = keys;
    this.#auth = auth;
    this.#warn = warn;
  }

  /** Loads the keys if they changed since the last look. */
  async refresh(): Promise<void> {
    const version = await this.#keys.version();
    if (version === this.#version) return;
    const keys = await this.#keys.list();
    this.#auth.setStored(keys.filter((k) => k.revokedAt === undefined));
    this.#version = version;
  }

  start(everyMs: number): void {
    let failing = false;
    this.#timer = setInterval(() => {
      this.refresh().then(() => {
        failing = false;
      }, (err: unknown) => {
        if (!failing) this.#warn(`client keys not refreshed (the ones loaded stay): ${err instanceof Error ? err.message : String(err)}`);
        failing = true;
      });
    }, everyMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}
