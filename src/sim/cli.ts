/**
 * `proxy sim --port P --replicas N --routing session|prefix|random [--mode openai|gpt56|deepseek|cerebras|openrouter|gemini]
 * [--seed S] [--host H] [--context T] [--ttl-ms MS] [--require-reasoning] [--api-key K]`:
 * runs the simulator until SIGINT or SIGTERM. The first line printed is the base URL.
 */
import { parseArgs } from 'node:util';
import { createSim } from './server.js';
import { SIM_MODES, SIM_ROUTINGS, type SimMode, type SimOptions, type SimRouting } from './types.js';

export const SIM_USAGE = `usage: proxy sim [--port 8790] [--host 127.0.0.1] [--replicas 1] [--routing session|prefix|random]
                 [--mode openai|gpt56|deepseek|cerebras|openrouter|gemini] [--seed 0] [--context 131072]
                 [--ttl-ms 300000] [--require-reasoning] [--api-key KEY]
  /v1 serves --mode; /openai/v1, /gpt56/v1 (GPT-5.6's breakpoint cache), /deepseek/v1, /cerebras/v1, /openrouter/v1 and /gemini/v1 serve one mode each.
  Admin: GET /_sim/stats, GET /_sim/requests, POST /_sim/advance?ms=N, POST /_sim/reset.`;

export interface SimCommandIO {
  stdout?: { write(text: string): unknown };
  /** Stops the server as SIGINT would (for tests and embedding). */
  signal?: AbortSignal;
}

export function parseSimArgs(args: string[]): SimOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      strict: true,
      options: {
        port: { type: 'string', default: '8790' },
        host: { type: 'string', default: '127.0.0.1' },
        replicas: { type: 'string', default: '1' },
        routing: { type: 'string', default: 'prefix' },
        mode: { type: 'string', default: 'openai' },
        seed: { type: 'string', default: '0' },
        context: { type: 'string' },
        'ttl-ms': { type: 'string' },
        'require-reasoning': { type: 'boolean', default: false },
        'api-key': { type: 'string' },
      },
    }));
  } catch (err) {
    throw badArgument(`${(err as Error).message}\n${SIM_USAGE}`);
  }
  const opts: SimOptions = {
    port: integer('--port', values.port, 0),
    host: values.host,
    replicas: integer('--replicas', values.replicas, 1),
    routing: oneOf('--routing', values.routing, SIM_ROUTINGS) as SimRouting,
    mode: oneOf('--mode', values.mode, SIM_MODES) as SimMode,
    seed: integer('--seed', values.seed, 0),
    requireReasoning: values['require-reasoning'],
  };
  if (values.context !== undefined) opts.contextTokens = integer('--context', values.context, 1);
  if (values['ttl-ms'] !== undefined) opts.ttlMs = integer('--ttl-ms', values['ttl-ms'], 0);
  if (values['api-key'] !== undefined) opts.apiKey = values['api-key'];
  return opts;
}

export async function runSimCommand(args: string[], io: SimCommandIO = {}): Promise<void> {
  const opts = parseSimArgs(args);
  const stdout = io.stdout ?? process.stdout;
  const sim = await createSim(opts);
  stdout.write(`${sim.url}\n`);
  stdout.write(`sim: mode ${opts.mode}, ${opts.replicas} replica(s), routing ${opts.routing}, seed ${opts.seed}; Ctrl-C stops it\n`);
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      io.signal?.removeEventListener('abort', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    if (io.signal?.aborted === true) stop();
    else io.signal?.addEventListener('abort', stop);
  });
  await sim.close();
}

function integer(name: string, value: string, min: number): number {
  if (!/^\d+$/.test(value) || Number(value) < min) throw badArgument(`${name} must be an integer >= ${min}, got ${JSON.stringify(value)}`);
  return Number(value);
}

function oneOf(name: string, value: string, allowed: readonly string[]): string {
  if (!allowed.includes(value)) throw badArgument(`${name} must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`);
  return value;
}

/** A bad option of `proxy sim`; the proxy's CLI (src/cli/sim.ts) reports it as its own bad_argument. */
export class SimArgumentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SimArgumentError';
  }
}

function badArgument(detail: string): SimArgumentError {
  return new SimArgumentError(detail);
}
