#!/usr/bin/env node
// The inspector page (ui/) bundled by esbuild into dist/ui/: index.html, app.js, app.css. Nothing is
// loaded from elsewhere at run time: preact and uPlot are inside app.js. `--meta` prints each input's
// share of the bundle (the sizes docs/decisions.md quotes).
import { build } from 'esbuild';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'ui');
mkdirSync(out, { recursive: true });

const result = await build({
  entryPoints: { app: join(root, 'ui', 'main.tsx') },
  outdir: out,
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2022', 'chrome110', 'firefox110', 'safari16'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  tsconfig: join(root, 'ui', 'tsconfig.json'),
  legalComments: 'linked',
  metafile: true,
  logLevel: 'warning',
});

writeFileSync(join(out, 'index.html'), `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>prefix-proxy inspector</title>
<link rel="stylesheet" href="app.css">
<script type="module" src="app.js"></script>
</head>
<body>
<div id="app"></div>
<noscript>The inspector needs JavaScript.</noscript>
</body>
</html>
`);

const sizes = ['app.js', 'app.css'].map((name) => {
  const bytes = readFileSync(join(out, name));
  return `${name} ${(bytes.length / 1024).toFixed(1)} KiB (${(gzipSync(bytes).length / 1024).toFixed(1)} KiB gzip)`;
});
process.stdout.write(`build-ui: dist/ui/index.html, ${sizes.join(', ')}\n`);

if (process.argv.includes('--meta')) {
  const inputs = Object.values(result.metafile.outputs).flatMap((o) => Object.entries(o.inputs));
  const byPackage = new Map();
  for (const [path, { bytesInOutput }] of inputs) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
    const name = m === null ? 'ui/ (ours)' : m[1];
    byPackage.set(name, (byPackage.get(name) ?? 0) + bytesInOutput);
  }
  for (const [name, bytes] of [...byPackage].sort((a, b) => b[1] - a[1])) process.stdout.write(`  ${name}: ${(bytes / 1024).toFixed(1)} KiB minified\n`);
}
