/**
 * OpenTelemetry traces, off unless `[tracing] endpoint` is set: spans batched and exported as
 * OTLP/HTTP JSON to the collector, sampled by ratio (a client's sampled `traceparent` is followed),
 * W3C trace context read from the client and passed to the upstream. The provider is the proxy's
 * own, never registered globally. Off, `NO_TRACING` hands out one no-op trace: nothing is allocated.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { ROOT_CONTEXT, SpanKind, defaultTextMapGetter, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { TracingConfig } from '../config/types.js';
import { NO_TRACE, SpanTrace, type RequestTrace } from './request-trace.js';

export interface Tracing {
  /** One client request's trace, its parent the client's `traceparent` when it sent one. */
  begin(headers: IncomingHttpHeaders): RequestTrace;
  /** Export what is buffered and stop. */
  shutdown(): Promise<void>;
}

export const NO_TRACING: Tracing = {
  begin: () => NO_TRACE,
  shutdown: async () => {},
};

export function createTracing(config: TracingConfig | undefined): Tracing {
  if (config === undefined) return NO_TRACING;
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: config.serviceName }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.sampleRatio) }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: config.endpoint }))],
  });
  const tracer = provider.getTracer('prefix-proxy');
  const propagator = new W3CTraceContextPropagator();
  return {
    begin(headers) {
      const parent = propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
      const span = tracer.startSpan(OPERATION_SPAN, { kind: SpanKind.SERVER }, parent);
      return new SpanTrace(tracer, propagator, trace.setSpan(parent, span), span, config.captureContent);
    },
    shutdown: () => provider.shutdown(),
  };
}

const OPERATION_SPAN = 'chat';
