/**
 * What a request's head (system prompt and tools) is in the log's terms: redacted, its chain start
 * h0 and its catalog's key. Clients send the same head with every request, 10 to 60 KB
 * of it for coding agents, so the answer is kept by the head's text: a request whose head was seen
 * costs one serialisation of its tools and a map lookup, not four passes over the head.
 */
import { LRUCache } from 'lru-cache';
import type { ToolSpec } from '../core/types.js';
import { redactDeep, redactText } from '../log/redact.js';
import { catalogKey, chainStart } from './fingerprint.js';

export interface Head {
  /** The system prompt as the log holds it. */
  system: string | undefined;
  /** The tools as the log holds them. */
  tools: ToolSpec[];
  h0: string;
  catalog: string;
}

/** Heads kept: one or a few per client build, so a few hundred cover a team. */
const MAX_HEADS = 256;

export class Heads {
  readonly #seen = new LRUCache<string, Head>({ max: MAX_HEADS });

  resolve(system: string | undefined, tools: readonly ToolSpec[]): Head {
    const key = `${system === undefined ? '0' : '1' + system}\u0000${JSON.stringify(tools)}`;
    let head = this.#seen.get(key);
    if (head === undefined) {
      const loggedSystem = system === undefined ? undefined : redactText(system).text;
      const loggedTools = redactDeep(tools).value as ToolSpec[];
      head = { system: loggedSystem, tools: loggedTools, h0: chainStart(loggedSystem, loggedTools), catalog: catalogKey(loggedTools) };
      this.#seen.set(key, head);
    }
    return head;
  }
}
