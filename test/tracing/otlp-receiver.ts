/**
 * An in-process OTLP/HTTP collector for tests: POST /v1/traces bodies (the exporter's JSON
 * encoding) decoded into flat spans with their attributes and events.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

interface OtlpValue { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean; arrayValue?: { values: OtlpValue[] } }
interface OtlpKeyValue { key: string; value: OtlpValue }
interface OtlpSpan {
  traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number;
  attributes?: OtlpKeyValue[]; events?: { name: string; attributes?: OtlpKeyValue[] }[]; status?: { code?: number; message?: string };
}
interface OtlpExport { resourceSpans: { resource?: { attributes?: OtlpKeyValue[] }; scopeSpans: { spans: OtlpSpan[] }[] }[] }

export type Value = string | number | boolean | Value[];

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  attributes: Record<string, Value>;
  events: { name: string; attributes: Record<string, Value> }[];
  status: { code?: number; message?: string } | undefined;
  resource: Record<string, Value>;
}

function valueOf(v: OtlpValue): Value {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  return (v.arrayValue?.values ?? []).map(valueOf);
}

function attributesOf(kvs: OtlpKeyValue[] | undefined): Record<string, Value> {
  return Object.fromEntries((kvs ?? []).map((kv) => [kv.key, valueOf(kv.value)]));
}

export interface Receiver {
  endpoint: string;
  spans: ReceivedSpan[];
  /** Content types the exporter posted with. */
  contentTypes: string[];
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      contentTypes.push(req.headers['content-type'] ?? '');
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport;
      for (const rs of body.resourceSpans) {
        const resource = attributesOf(rs.resource?.attributes);
        for (const ss of rs.scopeSpans) {
          for (const s of ss.spans) {
            spans.push({
              traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId || undefined, name: s.name, kind: s.kind,
              attributes: attributesOf(s.attributes), events: (s.events ?? []).map((e) => ({ name: e.name, attributes: attributesOf(e.attributes) })),
              status: s.status, resource,
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
