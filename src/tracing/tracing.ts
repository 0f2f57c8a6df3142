/**
 * OpenTelemetry traces, off unless `[tracing] endpoint` is set: spans batched and exported as
 * OTLP/HTTP JSON to the collector, sampled by ratio (a client's sampled `traceparent` is followed),
 * W3C trace context read from the client and passed to the upstream. The provider is the proxy's
 * own, never registered globally. Off, `NO_TRACING` hands out one no-op trace: nothing is allocated.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { ROOT_CONTEXT, SpanKind, defaultTextMapGetter, trace } from '@opentelemetry/api';
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

export async function createTracing(config: TracingConfig | undefined): Promise<Tracing> {
  if (config === undefined) return NO_TRACING;
  // The SDK and the exporter are loaded only when tracing is on: off, they take no memory.
  const [{ W3CTraceContextPropagator }, { OTLPTraceExporter }, { resourceFromAttributes }, { BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler }, { ATTR_SERVICE_NAME }] = await Promise.all([
    import('@opentelemetry/core'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/semantic-conventions'),
  ]);
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
