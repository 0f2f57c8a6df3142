/**
 * Portkey's gateway lives in its own package (bench/peers/portkey), installed there on first use
 * from its lock file, so its ~95 packages never enter the project's dependencies.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

export const PORTKEY_VERSION = '1.15.2';

const DIR = join(import.meta.dirname, '..', '..', '..', 'bench', 'peers', 'portkey');
const PKG = join(DIR, 'node_modules', '@portkey-ai', 'gateway');

/** The gateway's Node entry point, installing the package first if it is not there. */
export async function portkeyEntry(): Promise<string> {
  if (!existsSync(join(PKG, 'package.json'))) {
    process.stderr.write(`peers: installing @portkey-ai/gateway ${PORTKEY_VERSION} into ${DIR}\n`);
    // --ignore-scripts: its postinstall runs patch-package, which has no patches in the published package.
    await promisify(execFile)('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: DIR, timeout: 300_000 });
  }
  const version = (JSON.parse(readFileSync(join(PKG, 'package.json'), 'utf8')) as { version: string }).version;
  if (version !== PORTKEY_VERSION) throw new Error(`peers: expected @portkey-ai/gateway ${PORTKEY_VERSION} in ${PKG}, found ${version}`);
  return join(PKG, 'build', 'start-server.js');
}
