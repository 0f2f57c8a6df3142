// Lint: typescript-eslint's recommended rules, plus one rule per pure room: core, pricing, window,
// dialects and cache-hints do no I/O, read no clock and import no server libraries.
import tseslint from 'typescript-eslint';

const ioModules = [
  'fs', 'node:fs', 'fs/promises', 'node:fs/promises', 'net', 'node:net', 'http', 'node:http',
  'https', 'node:https', 'child_process', 'node:child_process', 'worker_threads', 'node:worker_threads',
  'dgram', 'node:dgram', 'undici', 'fastify', 'prom-client', 'pino', 'lru-cache', 'smol-toml',
];

const rooms = ['core', 'pricing', 'config', 'log', 'store', 'session', 'window', 'cache-hints', 'dialects', 'metrics', 'stats', 'tracing', 'inspector', 'proxy', 'sim', 'cli'];

/** A room that does I/O but imports only the rooms the table lets it. */
const room = (name, allowed) => ({
  files: [`src/${name}/**/*.ts`],
  rules: {
    'no-restricted-syntax': ['error', {
      selector: `ImportDeclaration[source.value=/(^|\\/)(${rooms.filter((r) => r !== name && !allowed.includes(r)).join('|')})\\//]`,
      message: `src/${name} may import only from: ${allowed.join(', ')} (docs/architecture.md section 2).`,
    }],
  },
});

/**
 * The simulator imports nothing outside src/sim but node's built-ins: a test double that shares
 * code with what it tests stops testing it. One entry per folder depth, since what a relative
 * path may climb depends on where the file is (`./x`, and `../x` only from a subfolder).
 */
const simOnly = (depth) => {
  const inside = depth === 0 ? '\\.\\/' : `\\.\\/|(?:\\.\\.\\/){1,${depth}}(?!\\.\\.\\/)`;
  const outside = `/^(?!(?:${inside}|node:))/`;
  const message = 'src/sim imports only src/sim and node: built-ins (docs/architecture.md section 9).';
  return {
    files: [`src/sim/${'*/'.repeat(depth)}*.ts`],
    rules: {
      'no-restricted-syntax': ['error',
        { selector: `ImportDeclaration[source.value=${outside}]`, message },
        { selector: `ExportNamedDeclaration[source.value=${outside}]`, message },
        { selector: `ExportAllDeclaration[source.value=${outside}]`, message },
        { selector: 'ImportExpression', message: 'src/sim: no dynamic import.' },
      ],
    },
  };
};

const pure = (room, allowed, files = [`src/${room}/**/*.ts`]) => ({
  files,
  rules: {
    'no-restricted-imports': ['error', {
      paths: ioModules.map((name) => ({ name, message: `src/${room} is pure: no I/O (docs/architecture.md section 2).` })),
    }],
    'no-restricted-globals': ['error',
      { name: 'fetch', message: 'pure room: no network' },
      { name: 'setTimeout', message: 'pure room: time is passed in' },
      { name: 'setInterval', message: 'pure room: time is passed in' },
    ],
    'no-restricted-properties': ['error',
      { object: 'Date', property: 'now', message: 'pure room: time is passed in' },
      { object: 'Math', property: 'random', message: 'pure room: randomness is passed in' },
      { object: 'process', property: 'env', message: 'pure room: configuration is passed in' },
    ],
    'no-restricted-syntax': ['error',
      {
        selector: `ImportDeclaration[source.value=/(^|\\/)(${rooms.filter((r) => r !== room && !allowed.includes(r)).join('|')})\\//]`,
        message: `src/${room} may import only from: ${allowed.join(', ')} (docs/architecture.md section 2).`,
      },
      { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: 'pure room: time is passed in' },
    ],
  },
});

export default tseslint.config(
  { ignores: ['dist/**', 'dist-check/**', 'node_modules/**', 'data/**', 'grafana/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  pure('core', ['core']),
  pure('pricing', ['core', 'pricing']),
  pure('window', ['core']),
  pure('dialects', ['core', 'dialects', 'cache-hints']),
  pure('cache-hints', ['core', 'config']),
  room('inspector', ['core', 'config', 'pricing', 'stats', 'window', 'store', 'log']),
  // The session room's pure parts: locating a session, planning what a request does, its view.
  // The log room's pure parts: an event's line, redaction, what a writer keeps in memory.
  pure('log', ['core', 'log'], ['event-tail', 'log-line', 'redact', 'redact-rules', 'redact-assignments'].map((f) => `src/log/${f}.ts`)),
  ...[0, 1, 2].map(simOnly),
  pure('session', ['core', 'log', 'window', 'session'], [
    'additions', 'fingerprint', 'incoming', 'locator', 'plan', 'prefix-index', 'retry', 'side', 'view',
  ].map((f) => `src/session/${f}.ts`)),
);
