/**
 * The shared suite for an inbound dialect (the client's side of a wire), over recorded fixtures in
 * test/fixtures/inbound/<wire>/<case>.json, each one of:
 *
 *   { about, request, expected }       the client's body parses whole to this ClientRequest
 *                                      (`idFields` left out: it is the body itself)
 *   { about, request, error }          the body is refused: { status, code, param }
 *   { about, reply, opaque? }          a NeutralReply rendered for the client, whole and as a stream,
 *                                      and read back by `reader` (the same wire's outbound decoder)
 *                                      into the same reply: the stream whole, one byte at a time and
 *                                      in seeded random chunks (chunkings of common.case.ts)
 *
 * Images the requests hold are "stored" by a sink that names them by their URL's length.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProxyError } from '../../src/core/errors.js';
import type { DialectRoute } from '../../src/core/route.js';
import type { NeutralReply } from '../../src/core/types.js';
import { replyDeltas } from '../../src/dialects/reply-deltas.js';
import type { ClientRequest, Dialect, ImageSink, InboundDialect, ReplyMeta, RequestTarget } from '../../src/dialects/types.js';
import { chunkings, decodeStream } from './common.case.js';

export interface InboundSuite {
  inbound: InboundDialect;
  fixtures: string;
  /** The same wire's outbound dialect, whose decoders read what the inbound side renders. */
  reader: Dialect;
  readerRoute: DialectRoute;
  /** What the reader gets back of a reply that went out: the reply as the client can see it again. */
  seen: (reply: NeutralReply, opaque: boolean) => NeutralReply;
  /** What the reader read, less what the proxy makes up per reply (item ids). */
  normalize: (reply: NeutralReply) => NeutralReply;
  /** The request a render case's reply answers (its `opaque` flag set). */
  requestFor: (opaque: boolean) => ClientRequest;
  /** The proxy's code and param as the wire's error body carries them; absent: `error.code`, `error.param`. */
  errorFields?: (body: unknown) => { code: unknown; param: unknown };
}

interface Case {
  about: string;
  request?: unknown;
  expected?: Omit<ClientRequest, 'idFields'>;
  error?: { status: number; code: string; param: string | null };
  reply?: NeutralReply;
  opaque?: boolean;
  /** Where the request came in, for a wire that reads its path (Gemini's model) or query. */
  target?: RequestTarget;
}

export const testImages: ImageSink = (url, detail, _param) => ({ type: 'image', sha256: `len-${url.length}`, mime: 'image/png', tokens: 85, ...(detail === undefined ? {} : { detail }) });

const META: ReplyMeta = { id: 'abc', created: 1796000000, model: 'client-model', logged: { session: '20261201T000000Z-0badc0de', seq: 6 } };

export function runInboundSuite(suite: InboundSuite): void {
  const files = readdirSync(suite.fixtures).filter((f) => f.endsWith('.json')).sort();
  describe(`inbound ${suite.inbound.paths.join(', ')}: shared suite`, () => {
    it('has request, error and render cases', () => {
      const cases = files.map((f) => JSON.parse(readFileSync(join(suite.fixtures, f), 'utf8')) as Case);
      expect(cases.some((c) => c.expected !== undefined)).toBe(true);
      expect(cases.some((c) => c.error !== undefined)).toBe(true);
      expect(cases.some((c) => c.reply !== undefined)).toBe(true);
    });
    for (const file of files) {
      const c = JSON.parse(readFileSync(join(suite.fixtures, file), 'utf8')) as Case;
      const name = `${file.slice(0, -'.json'.length)}: ${c.about}`;
      if (c.expected !== undefined) {
        it(`${name}: parses whole`, () => {
          const { idFields, ...got } = suite.inbound.parse(c.request, testImages, c.target);
          expect(got).toStrictEqual(c.expected);
          expect(idFields).toMatchObject(c.request as object);
        });
      }
      const refusal = c.error;
      if (refusal !== undefined) {
        it(`${name}: is refused naming the field`, () => {
          let thrown: unknown;
          try {
            suite.inbound.parse(c.request, testImages, c.target);
          } catch (err) {
            thrown = err;
          }
          expect(thrown).toBeInstanceOf(ProxyError);
          const err = thrown as ProxyError;
          expect({ status: err.status, code: err.code, param: err.param }).toStrictEqual(refusal);
          const body = suite.inbound.errorBody(err);
          if (suite.errorFields === undefined) expect(body).toMatchObject({ error: { code: refusal.code, param: refusal.param } });
          else expect(suite.errorFields(body)).toStrictEqual({ code: refusal.code, param: refusal.param });
        });
      }
      if (c.reply !== undefined) renderCase(suite, name, c.reply, c.opaque === true);
    }
  });
}

function renderCase(suite: InboundSuite, name: string, reply: NeutralReply, opaque: boolean): void {
  const req = suite.requestFor(opaque);
  const want = suite.seen(reply, opaque);
  it(`${name}: the whole reply reads back as the same reply`, () => {
    const body = suite.inbound.renderReply(reply, META, req);
    expect(suite.normalize(suite.reader.decodeReply(200, body, suite.readerRoute))).toStrictEqual(want);
  });
  it(`${name}: the stream reads back as the same reply from any chunking`, () => {
    const stream = suite.inbound.openStream(META, req);
    let text = '';
    for (const d of replyDeltas(reply)) text += stream.delta(d);
    if (reply.usage !== undefined) text += stream.delta({ type: 'usage', usage: reply.usage });
    text += stream.end(reply);
    const bytes = new TextEncoder().encode(text);
    for (const { name: how, chunks } of chunkings(bytes)) {
      const { deltas, reply: got } = decodeStream(suite.reader, suite.readerRoute, chunks);
      expect(suite.normalize(got), how).toStrictEqual(want);
      expect(deltas.filter((d) => d.type === 'error'), how).toStrictEqual([]);
    }
  });
}
