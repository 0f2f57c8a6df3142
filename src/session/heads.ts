/**
 * What a request's head (system prompt and tools) is in the log's terms: redacted, its chain start
 * h0 and its catalog's key. Clients send the same head with every request, 10 to 60 KB
 * of it for coding agents, so the answer is kept by the head's text: a request whose head was seen
 * costs a comparison with the heads resolved last (or, for another, one serialisation of its tools
 * and a map lookup), not four passes over the head.
 */
import { LRUCache } from 'lru-cache';
import { sameJson } from '../core/json-equal.js';
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
/** The heads last resolved, compared as they come before any serialisation: the clients busy now. */
const RECENT = 4;

interface Seen {
  system: string | undefined;
  /** The tools last met for this head: a list resent as the same array matches by identity. */
  tools: readonly ToolSpec[];
  head: Head;
}

export class Heads {
  readonly #seen = new LRUCache<string, Head>({ max: MAX_HEADS });
  #recent: Seen[] = [];

  resolve(system: string | undefined, tools: readonly ToolSpec[]): Head {
    for (const r of this.#recent) {
      if (r.system !== system) continue;
      if (r.tools === tools) return r.head;
      if (sameJson(r.tools, tools)) {
        // The client's next body hands the same list over again (src/proxy/head-memo.ts): an identity check then.
        r.tools = tools;
        return r.head;
      }
    }
    const key = `${system === undefined ? '0' : '1' + system}\u0000${JSON.stringify(tools)}`;
    let head = this.#seen.get(key);
    if (head === undefined) {
      const loggedSystem = system === undefined ? undefined : redactText(system).text;
      const loggedTools = redactDeep(tools).value as ToolSpec[];
      head = { system: loggedSystem, tools: loggedTools, h0: chainStart(loggedSystem, loggedTools), catalog: catalogKey(loggedTools) };
      this.#seen.set(key, head);
    }
    this.#recent = [{ system, tools, head }, ...this.#recent.slice(0, RECENT - 1)];
    return head;
  }
}
