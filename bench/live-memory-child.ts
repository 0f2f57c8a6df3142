/**
 * The proxy alone in a process (`node --expose-gc live-memory-child.js CONFIG`), so its memory is
 * measured apart from the simulator and the clients. Over IPC: `ready` with its URL and memory
 * before any session; on `measure`, its memory after a full GC and the live session count; on
 * `close`, it closes and exits.
 */
import { loadConfig } from '../src/config/load.js';
import { startProxy } from '../src/proxy/server.js';

export interface Memory {
  rss: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

export type ChildMessage =
  | { kind: 'ready'; url: string; memory: Memory }
  | { kind: 'memory'; memory: Memory; live: number };

const path = process.argv[2];
if (path === undefined || process.send === undefined) throw new Error('usage: fork live-memory-child.js CONFIG (with an IPC channel)');
const send = process.send.bind(process);

function memory(): Memory {
  global.gc?.();
  global.gc?.();
  const { rss, heapUsed, external, arrayBuffers } = process.memoryUsage();
  return { rss, heapUsed, external, arrayBuffers };
}

const proxy = await startProxy(loadConfig({ path, env: {} }));
send({ kind: 'ready', url: proxy.url, memory: memory() } satisfies ChildMessage);
process.on('message', (m: { kind: string }) => {
  if (m.kind === 'measure') send({ kind: 'memory', memory: memory(), live: proxy.sessions.liveCount } satisfies ChildMessage);
  if (m.kind === 'close') void proxy.close().then(() => process.disconnect());
});
