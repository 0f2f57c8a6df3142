/**
 * The compose replicas (docker-compose.yml, profile "replicas"): a PostgreSQL service, two
 * replicas on the committed replica config, a load balancer naming both. No Docker engine here:
 * the files are checked as text, and the replica config is loaded as the proxy loads it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';

const ROOT = join(import.meta.dirname, '..', '..');

describe('docker-compose replicas', () => {
  const compose = readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8');

  it('adds PostgreSQL, two replicas and a load balancer, all under the replicas profile', () => {
    for (const service of ['postgres', 'replica-a', 'replica-b', 'lb']) expect(compose).toMatch(new RegExp(`^ {2}${service}:`, 'm'));
    expect(compose.match(/profiles: \[replicas\]/g)).toHaveLength(3); // postgres, the replica anchor, lb
    expect(compose).toMatch(/^ {2}replica-b: \*replica$/m);
    expect(compose).toContain('PREFIX_PROXY_DATABASE_URL=postgres://prefix:${POSTGRES_PASSWORD:-prefix}@postgres:5432/prefix');
    expect(compose).toContain('./deploy/replica.toml:/app/replica.toml:ro');
    expect(compose).toContain('./deploy/nginx.conf:/etc/nginx/nginx.conf:ro');
    expect(compose).toContain('"127.0.0.1:8788:8788"');
  });

  it('the replica config loads with the PostgreSQL store, its URL read from the environment', () => {
    const config = loadConfig({ path: join(ROOT, 'deploy', 'replica.toml'), env: { OPENAI_API_KEY: 'k' } });
    expect(config.store).toMatchObject({ kind: 'postgres', urlEnv: 'PREFIX_PROXY_DATABASE_URL' });
    expect(config.listen).toEqual({ host: '0.0.0.0', port: 8787 });
    expect(readFileSync(join(ROOT, 'deploy', 'replica.toml'), 'utf8')).not.toMatch(/postgres:\/\//);
  });

  it('the load balancer sends to both replicas on 8787, unbuffered, and never resends a sent POST', () => {
    const nginx = readFileSync(join(ROOT, 'deploy', 'nginx.conf'), 'utf8');
    expect(nginx).toContain('server replica-a:8787;');
    expect(nginx).toContain('server replica-b:8787;');
    expect(nginx).toContain('listen 8788;');
    expect(nginx).toContain('proxy_buffering off;');
    expect(nginx).toMatch(/proxy_next_upstream error;/);
  });
});

describe('startup banner', () => {
  it('names the PostgreSQL store and the variable its URL comes from, never the URL', () => {
    const config = loadConfig({ path: join(ROOT, 'deploy', 'replica.toml'), env: { PREFIX_PROXY_DATABASE_URL: 'postgres://u:secret@db/x' } });
    const banner = config.describe();
    expect(banner).toContain('store: postgres, URL from $PREFIX_PROXY_DATABASE_URL');
    expect(banner).not.toContain('secret');
  });
});
