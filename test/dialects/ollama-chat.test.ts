import { fileURLToPath } from 'node:url';
import { ollamaChat } from '../../src/dialects/ollama-chat/index.js';
import { runDialectSuite } from './common.case.js';

runDialectSuite({
  dialect: ollamaChat,
  fixtures: fileURLToPath(new URL('../fixtures/dialects/ollama-chat', import.meta.url)),
  baseRoute: { wire: 'ollama-chat', baseUrl: 'http://127.0.0.1:11434', reasoningOut: 'reasoning', reasoningOnToolTurns: false, headers: {}, numCtx: 98304 },
});
