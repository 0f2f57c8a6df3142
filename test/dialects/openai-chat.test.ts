import { fileURLToPath } from 'node:url';
import { openaiChat } from '../../src/dialects/openai-chat/index.js';
import { runDialectSuite } from './common.case.js';

runDialectSuite({
  dialect: openaiChat,
  fixtures: fileURLToPath(new URL('../fixtures/dialects/openai-chat', import.meta.url)),
  baseRoute: { wire: 'openai-chat', baseUrl: 'https://upstream.invalid/v1', reasoningOut: 'reasoning_content', reasoningOnToolTurns: false, headers: {} },
});
