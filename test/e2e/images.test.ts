/**
 * A data-URL image is stored once under its SHA-256 in the data directory; the log holds the
 * digest and the window's estimate, never the pixels; the upstream receives the stored bytes.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSessions, startWorld, tag, type World } from './harness.js';

/** A PNG header (enough for the size; the pixels are not inspected). */
function png(width: number, height: number, salt: string): Buffer {
  const head = Buffer.alloc(33);
  head.writeUInt32BE(0x89504e47, 0);
  head.writeUInt32BE(0x0d0a1a0a, 4);
  head.writeUInt32BE(13, 8);
  head.write('IHDR', 12, 'latin1');
  head.writeUInt32BE(width, 16);
  head.writeUInt32BE(height, 20);
  return Buffer.concat([head, Buffer.from(salt)]);
}

let world: World;
beforeAll(async () => {
  world = await startWorld({ tap: true });
});
afterAll(async () => world.close());

describe('images', () => {
  it('are stored once by digest, logged by digest, and sent upstream as the stored bytes', async () => {
    const bytes = png(2000, 1200, tag("pixels"));
    const sha = createHash('sha256').update(bytes).digest('hex');
    const url = `data:image/png;base64,${bytes.toString('base64')}`;
    const user = tag('look at this');
    const messages = [{ role: 'user' as const, content: [{ type: 'text' as const, text: user }, { type: 'image_url' as const, image_url: { url, detail: 'high' as const } }] }];
    const first = await world.client.chat.completions.create({ model: 'ds', messages });
    await world.client.chat.completions.create({
      model: 'ds',
      messages: [...messages, { role: 'assistant', content: first.choices[0]!.message.content }, { role: 'user', content: 'and again' }],
    });

    const blob = join(world.dir, 'data', 'blobs', sha);
    expect(existsSync(blob)).toBe(true);
    expect(readFileSync(blob).equals(bytes)).toBe(true);

    const session = [...(await readSessions(world)).values()].find((events) => JSON.stringify(events).includes(user))!;
    const text = JSON.stringify(session);
    expect(text).not.toContain(bytes.toString('base64'));
    const logged = session.find((e) => e.type === 'client.msg' && Array.isArray(e.msg.content));
    // 2000x1200 at high detail: shorter side scaled to 768 -> 1280x768 -> 3x2 tiles -> 85 + 6*170.
    expect(logged).toMatchObject({ msg: { content: [{ type: 'text', text: user }, { type: 'image', sha256: sha, mime: 'image/png', tokens: 85 + 6 * 170, detail: 'high' }] } });
    expect(session.filter((e) => e.type === 'client.msg' && Array.isArray(e.msg.content))).toHaveLength(1);

    const wire = world.tap!.requests.filter((r) => JSON.stringify(r.body).includes(user));
    expect(wire).toHaveLength(2);
    for (const r of wire) {
      const part = (r.body.messages as { content: unknown }[])[0]!.content as { type: string; image_url?: { url: string; detail?: string } }[];
      expect(part[1]).toEqual({ type: 'image_url', image_url: { url, detail: 'high' } });
    }
  });

  it('a second request with the same image writes nothing: the digest is known, the bytes come from memory', async () => {
    const bytes = png(800, 600, tag('again'));
    const sha = createHash('sha256').update(bytes).digest('hex');
    const url = `data:image/png;base64,${bytes.toString('base64')}`;
    const ask = (text: string, detail: 'auto' | 'high') => world.client.chat.completions.create({
      model: 'ds', messages: [{ role: 'user', content: [{ type: 'text', text: tag(text) }, { type: 'image_url', image_url: { url, detail } }] }],
    });
    await ask('first', 'auto');
    const blobs = join(world.dir, 'data', 'blobs');
    expect(existsSync(join(blobs, sha))).toBe(true);
    // Gone from the disk: a write would put it back.
    rmSync(join(blobs, sha));
    const names = readdirSync(blobs);
    // Another conversation, another detail: the URL text is not recognised, the digest is.
    await ask('second', 'high');
    expect(readdirSync(blobs)).toEqual(names);
    const sent = world.tap!.requests.at(-1)!.body as { messages: { content: { image_url?: { url: string } }[] }[] };
    expect(sent.messages[0]!.content[1]!.image_url?.url).toBe(url);
  });

  it('a remote image URL is refused with a clear 400 and nothing is logged', async () => {
    const before = JSON.stringify([...(await readSessions(world)).values()]).length;
    const err = await world.client.chat.completions
      .create({ model: 'ds', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.invalid/cat.png' } }] }] })
      .catch((e: unknown) => e as { status: number; error: { code: string; param: string } });
    expect(err).toMatchObject({ status: 400, error: { code: 'invalid_request', param: 'messages[0].content[0].image_url.url' } });
    expect(JSON.stringify([...(await readSessions(world)).values()]).length).toBe(before);
  });
});
