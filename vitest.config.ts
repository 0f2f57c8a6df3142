import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores: forks keep suites isolated without oversubscribing the machine.
    pool: 'forks',
    maxWorkers: 2,
    // A poll waits for what a page or a server does next; on two shared cores under the whole
    // suite, a chart has taken over a second to draw. A poll that holds returns as soon as it does.
    expect: { poll: { timeout: 10_000 } },
  },
});
