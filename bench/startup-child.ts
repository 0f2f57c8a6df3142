/**
 * One startup, in a process of its own (`node --expose-gc startup-child.js DATA_DIR`): the time of
 * `SessionManager.init()` and the process's memory before and after it, as JSON on stdout.
 */
import { FileStore } from '../src/store/files.js';
import { SessionManager } from '../src/session/manager.js';
import type { StartupChildResult } from './startup.js';

const dataDir = process.argv[2];
if (dataDir === undefined) throw new Error('usage: startup-child.js DATA_DIR');
const gc = (): void => {
  global.gc?.();
  global.gc?.();
};

const sessions = new SessionManager(new FileStore(dataDir), { now: () => new Date(), warn: (line) => process.stderr.write(`${line}\n`) });
gc();
const rssBefore = process.memoryUsage().rss;
const t0 = performance.now();
const cpu0 = process.cpuUsage();
const init = await sessions.init();
const initMs = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
gc();
const mem = process.memoryUsage();
const result: StartupChildResult = {
  initMs, cpuMs: (cpu.user + cpu.system) / 1000, sessions: init.sessions, readWhole: init.readWhole, damaged: init.damaged.length, rssBefore, rss: mem.rss, heapUsed: mem.heapUsed,
};
process.stdout.write(JSON.stringify(result));
await sessions.close();
