/** `proxy sim ...`: the simulated upstream, as a server of its own. */
import { ProxyError } from '../core/errors.js';
import { runSimCommand, SimArgumentError } from '../sim/cli.js';

export async function simCommand(args: string[]): Promise<number> {
  try {
    await runSimCommand(args);
  } catch (err) {
    // The simulator owes nothing to the proxy's error table; its bad options become ours here.
    if (err instanceof SimArgumentError) throw new ProxyError('bad_argument', { detail: err.message });
    throw err;
  }
  return 0;
}
