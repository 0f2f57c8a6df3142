import { fileURLToPath } from 'node:url';
import { anthropicMessages } from '../../src/dialects/anthropic-messages/index.js';
import { runDialectSuite } from './common.case.js';

runDialectSuite({
  dialect: anthropicMessages,
  fixtures: fileURLToPath(new URL('../fixtures/dialects/anthropic-messages', import.meta.url)),
  baseRoute: { wire: 'anthropic-messages', baseUrl: 'https://api.anthropic.com/v1', reasoningOut: 'none', reasoningOnToolTurns: false, headers: {} },
});
