/**
 * A real PostgreSQL for the tests that need one: a temporary cluster (initdb into a temp dir),
 * started by pg_ctl on a free 127.0.0.1 port with its socket in that dir, as an unprivileged user
 * when the tests run as root (postgres refuses root), stopped and removed by `stop`. Debian's
 * `postgresql` package provides the binaries (scripts/test-servers.sh installs it when missing);
 * without them the caller's suite fails with a message naming the command, it never skips.
 */
import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export interface PgServer {
  /** The cluster's temp dir (data, socket, log); removed by `stop`. */
  dir: string;
  /** `postgres://postgres@127.0.0.1:PORT/` plus a database name gives a URL. */
  urlFor(db: string): string;
  /** A new empty database; its URL. */
  createDatabase(name: string): Promise<string>;
  /** Stops the server (fast shutdown: connections are cut), keeping its data: an outage. */
  pause(): void;
  /** Starts it again on the same port, with the same data. */
  resume(): void;
  stop(): void;
}

const INSTALL = 'apt-get install -y postgresql (npm test\'s pretest, scripts/test-servers.sh, does)';

/** initdb and pg_ctl from PATH, else from the newest /usr/lib/postgresql/<major>/bin. */
function binDir(): string | undefined {
  const onPath = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).stdout.trim();
  if (onPath !== '' && spawnSync('sh', ['-c', 'command -v pg_ctl'], { encoding: 'utf8' }).status === 0) return '';
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const majors = readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a));
  return majors[0] === undefined ? undefined : join(root, majors[0], 'bin');
}

/** The user the cluster runs as: ourselves, or when root, `postgres` (the package's) or `nobody`. */
function runAs(): { prefix: string[]; uid: number; gid: number } | undefined {
  if (userInfo().uid !== 0) return undefined;
  for (const name of ['postgres', 'nobody']) {
    const id = spawnSync('id', ['-u', name], { encoding: 'utf8' });
    const gid = spawnSync('id', ['-g', name], { encoding: 'utf8' });
    if (id.status === 0 && gid.status === 0) return { prefix: ['runuser', '-u', name, '--'], uid: Number(id.stdout), gid: Number(gid.stdout) };
  }
  throw new Error('running as root and neither a postgres nor a nobody user exists to run PostgreSQL as');
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export async function startPgServer(): Promise<PgServer> {
  const bin = binDir();
  if (bin === undefined) throw new Error(`PostgreSQL is not installed (no initdb on PATH nor under /usr/lib/postgresql/*/bin). Install it: ${INSTALL}.`);
  const tool = (name: string) => (bin === '' ? name : join(bin, name));
  const user = runAs();
  const dir = mkdtempSync(join(tmpdir(), 'pp-pg-'));
  const data = join(dir, 'data');
  const sock = join(dir, 'sock');
  mkdirSync(sock);
  if (user !== undefined) {
    chownSync(dir, user.uid, user.gid);
    chownSync(sock, user.uid, user.gid);
  }
  const run = (cmd: string, args: string[]) => {
    const [file, ...rest] = [...(user?.prefix ?? []), cmd, ...args];
    const r = spawnSync(file!, rest, { encoding: 'utf8', timeout: 60_000 });
    if (r.error !== undefined || r.status !== 0) {
      const log = existsSync(join(dir, 'log')) ? readFileSync(join(dir, 'log'), 'utf8').slice(-3000) : '';
      throw new Error(`${cmd} ${args.join(' ')} failed (${r.error?.message ?? `exit ${r.status}`}):\n${r.stdout}${r.stderr}${log}`);
    }
  };
  const port = await freePort();
  const start = () => run(tool('pg_ctl'), ['-D', data, '-l', join(dir, 'log'), '-w', '-t', '60', '-o', `-p ${port} -k ${sock} -c listen_addresses=127.0.0.1 -c max_connections=200`, 'start']);
  try {
    run(tool('initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-locale', '--no-sync']);
    start();
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`PostgreSQL could not be started for the tests: ${(err as Error).message}\nInstall or repair it: ${INSTALL}.`);
  }
  const urlFor = (db: string) => `postgres://postgres@127.0.0.1:${port}/${db}`;
  let stopped = false;
  return {
    dir,
    urlFor,
    async createDatabase(name) {
      const client = new pg.Client({ connectionString: urlFor('postgres') });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE "${name}"`);
      } finally {
        await client.end();
      }
      return urlFor(name);
    },
    pause() {
      run(tool('pg_ctl'), ['-D', data, '-m', 'fast', '-w', 'stop']);
    },
    resume() {
      start();
    },
    stop() {
      if (stopped) return;
      stopped = true;
      try {
        run(tool('pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
