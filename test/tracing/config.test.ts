/** `[tracing]`: off unless an endpoint is set; the endpoint takes a base or the traces URL; the ratio is checked. */
import { describe, expect, it } from 'vitest';
import { usageAttributes } from '../../src/tracing/gen-ai.js';
import { loadToml, thrown } from '../config/helpers.js';

describe('[tracing]', () => {
  it('is off without the table', () => {
    expect(loadToml('').tracing).toBeUndefined();
  });

  it('adds /v1/traces to a base endpoint and applies the defaults', () => {
    expect(loadToml('[tracing]\nendpoint = "http://127.0.0.1:4318/"').tracing).toEqual({
      endpoint: 'http://127.0.0.1:4318/v1/traces', serviceName: 'prefix-proxy', sampleRatio: 1, captureContent: false,
    });
    const given = loadToml('[tracing]\nendpoint = "http://c:4318/v1/traces"\nservice_name = "gw"\nsample_ratio = 0.25\ncapture_content = true').tracing;
    expect(given).toEqual({ endpoint: 'http://c:4318/v1/traces', serviceName: 'gw', sampleRatio: 0.25, captureContent: true });
  });

  it('refuses a ratio outside 0 to 1 and an endpoint that is not http(s), naming the key', () => {
    expect(thrown(() => loadToml('[tracing]\nendpoint = "http://c"\nsample_ratio = 2')).message).toContain('tracing.sample_ratio: expected a number from 0 to 1');
    expect(thrown(() => loadToml('[tracing]\nendpoint = "grpc://c:4317"')).message).toContain('tracing.endpoint: expected an http(s) URL');
  });
});

describe('GenAI usage attributes', () => {
  it('leaves out what the upstream did not report, never writing 0', () => {
    expect(usageAttributes(undefined, null)).toEqual({});
    expect(usageAttributes({ prompt_tokens: 10 }, 'stop')).toEqual({ 'gen_ai.response.finish_reasons': ['stop'], 'gen_ai.usage.input_tokens': 10 });
    expect(usageAttributes({ prompt_tokens: 10, cached_tokens: 0, cache_write_tokens: 4, completion_tokens: 3, reasoning_tokens: 1 }, 'tool_calls')).toEqual({
      'gen_ai.response.finish_reasons': ['tool_calls'], 'gen_ai.usage.input_tokens': 10, 'gen_ai.usage.output_tokens': 3,
      'gen_ai.usage.cache_read.input_tokens': 0, 'gen_ai.usage.cache_creation.input_tokens': 4, 'gen_ai.usage.reasoning.output_tokens': 1,
    });
  });
});
