/** `proxy sim ...`: the simulated upstream, as a server of its own. */
import { runSimCommand } from '../sim/cli.js';

export async function simCommand(args: string[]): Promise<number> {
  await runSimCommand(args);
  return 0;
}
