import { fileURLToPath } from 'node:url';
import { openaiResponses } from '../../src/dialects/openai-responses/index.js';
import { runDialectSuite } from './common.case.js';

// Cases keep reasoning unless their case.json route says `"keepReasoning": false`.
runDialectSuite({
  dialect: openaiResponses,
  fixtures: fileURLToPath(new URL('../fixtures/dialects/openai-responses', import.meta.url)),
  baseRoute: { wire: 'openai-responses', baseUrl: 'https://api.openai.com/v1', reasoningOut: 'none', reasoningOnToolTurns: false, headers: {}, keepReasoning: true },
});
