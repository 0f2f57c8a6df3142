/**
 * One client request's spans: the request's own (SERVER), and a child per stage the pipeline
 * names (session match, window build, the upstream call as CLIENT, log sync). The pipeline calls
 * these at its stage boundaries; with tracing off every call is a no-op on one shared object.
 */
import { SpanKind, SpanStatusCode, defaultTextMapSetter, trace, type Attributes, type Context, type Span, type TextMapPropagator, type Tracer } from '@opentelemetry/api';

export type StageName = 'session.match' | 'window.build' | 'upstream' | 'log.sync';

export interface Stage {
  set(attributes: Attributes): void;
  event(name: string, attributes?: Attributes): void;
  end(error?: unknown): void;
}

export interface RequestTrace {
  /** The request's attributes live on the request span. */
  set(attributes: Attributes): void;
  /** Renames the request span, as the conventions name it (`chat <model>`) once the model is known. */
  name(name: string): void;
  stage(name: StageName, spanName?: string): Stage;
  /** Headers that carry this trace to the upstream (`traceparent`), from inside the stage's span. */
  inject(stage: Stage, headers: Record<string, string>): void;
  /** Content attributes are wanted (`[tracing] capture_content`). */
  readonly captureContent: boolean;
  end(error?: unknown): void;
}

const NO_STAGE: Stage = { set() {}, event() {}, end() {} };

export const NO_TRACE: RequestTrace = {
  set() {}, name() {}, stage: () => NO_STAGE, inject() {}, captureContent: false, end() {},
};

class SpanStage implements Stage {
  constructor(readonly span: Span) {}

  set(attributes: Attributes): void {
    this.span.setAttributes(attributes);
  }

  event(name: string, attributes?: Attributes): void {
    this.span.addEvent(name, attributes);
  }

  end(error?: unknown): void {
    endSpan(this.span, error);
  }
}

export class SpanTrace implements RequestTrace {
  constructor(
    private readonly tracer: Tracer,
    private readonly propagator: TextMapPropagator,
    private readonly context: Context,
    private readonly span: Span,
    readonly captureContent: boolean,
  ) {}

  set(attributes: Attributes): void {
    this.span.setAttributes(attributes);
  }

  name(name: string): void {
    this.span.updateName(name);
  }

  stage(name: StageName, spanName = name): Stage {
    const kind = name === 'upstream' ? SpanKind.CLIENT : SpanKind.INTERNAL;
    return new SpanStage(this.tracer.startSpan(spanName, { kind }, this.context));
  }

  inject(stage: Stage, headers: Record<string, string>): void {
    if (stage instanceof SpanStage) this.propagator.inject(trace.setSpan(this.context, stage.span), headers, defaultTextMapSetter);
  }

  end(error?: unknown): void {
    endSpan(this.span, error);
  }
}

/** An error's class and code only: its message may quote an upstream body, which may quote the prompt. */
function endSpan(span: Span, error: unknown): void {
  if (error !== undefined) {
    const code = (error as { code?: unknown }).code;
    span.setStatus({ code: SpanStatusCode.ERROR, message: typeof code === 'string' ? code : 'error' });
    span.setAttribute('error.type', typeof code === 'string' ? code : error instanceof Error ? error.name : 'error');
  }
  span.end();
}
