/**
 * Sessions as real clients resend them, generated: each request carries the client's whole
 * history (its own messages as it wrote them, credentials and images included, and the replies as
 * it received them) plus what is new, re-serialised, with reasoning dropped or kept, with and
 * without a session header. The log redacts credentials; the client never does. Whatever the
 * client does of that, the conversation stays one append-only log: never a client.rewrite, each
 * message the client wrote logged once, and the log's bytes within 1.2x of the conversation's
 * (see logSize in test/e2e/agent-session.ts for the measure): O(n), not a copy of the suffix per
 * request. Through the proxy (real HTTP, the official client) to the simulator's openrouter mode.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AgentClient, REAL_CLIENT, type AgentBehaviour } from '../e2e/agent-client.js';
import { drive, filesWith, leakedCredentials, logSize, readLogFiles } from '../e2e/agent-session.js';
import { startReasoningWorld, type ReasoningWorld } from '../e2e/reasoning-world.js';

let w: ReasoningWorld;
beforeAll(async () => {
  // A context large enough that the window never trims: only the client's resending is at stake.
  w = await startReasoningWorld(`
[models.or-big]
provider = "or"
model = "meta/muse-spark-1.3"
context = 400000
`, { requireReasoning: true });
});
afterAll(async () => {
  await w?.close();
});

interface Case {
  seed: number;
  requests: number;
  behaviour: AgentBehaviour;
  explicitId: boolean;
  stream: 'always' | 'never' | 'alternate';
}

/** How the client behaves; `credentials` says where it plants them. */
function behaviour(credentials: 'messages' | 'system'): fc.Arbitrary<AgentBehaviour> {
  const inMessages = credentials === 'messages';
  return fc.record({
    credentialRate: inMessages ? fc.constantFrom(0.1, 0.25, 0.5) : fc.constant(0),
    userCredentialRate: inMessages ? fc.constantFrom(0, 0.2, 0.5) : fc.constant(0),
    systemCredential: fc.constant(!inMessages),
    imageRate: fc.constantFrom(0, 0.3),
    dropReasoning: fc.constantFrom(0, 0.5, 1),
    reserialise: fc.boolean(),
    unicode: fc.boolean(),
    maxParallel: fc.integer({ min: 1, max: 3 }),
    roundsPerTurn: fc.integer({ min: 1, max: 5 }),
    resultBytes: fc.constantFrom(300, 1500, 4000),
    systemBytes: fc.constantFrom(200, 3000),
  });
}

function cases(credentials: 'messages' | 'system'): fc.Arbitrary<Case> {
  return fc.record({
    seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
    requests: fc.integer({ min: 6, max: 40 }),
    behaviour: behaviour(credentials),
    explicitId: fc.boolean(),
    stream: fc.constantFrom('always', 'never', 'alternate'),
  });
}

interface Outcome {
  requests: number;
  failed: string | undefined;
  files: number;
  rewrites: number;
  clientMsgs: number;
  distinct: number;
  ratio: number;
  leaked: string[];
}

let sessions = 0;

async function play(c: Case): Promise<Outcome> {
  // Unique per session of this file, and the same on every run (no pid), so a seed replays exactly.
  const t = `resend-${String(++sessions).padStart(4, '0')}`;
  const agent = new AgentClient(c.seed, t, c.behaviour);
  const driven = await drive(w, 'or-big', agent, {
    requests: c.requests, stream: c.stream, ...(c.explicitId ? { headers: { 'x-session-id': t } } : {}),
  });
  const files = filesWith(await readLogFiles(w), t);
  const size = logSize(files, agent);
  return {
    requests: driven.answers.length, failed: driven.failed?.error, files: files.length, rewrites: size.rewrites,
    clientMsgs: size.clientMsgs, distinct: agent.distinctMessages, ratio: Number(size.ratio.toFixed(2)), leaked: await leakedCredentials(w, agent),
  };
}

/** The property, over `numRuns` generated sessions; seeded, and shrinking stops after the time limit. */
async function holds(arbitrary: fc.Arbitrary<Case>, seed: number, numRuns: number): Promise<void> {
  await fc.assert(
    fc.asyncProperty(arbitrary, async (c) => {
      const o = await play(c);
      // All at once, so a failure shows every figure.
      expect({ ...o, ratioWithin: o.ratio <= 1.2, logsEachMessageOnce: o.clientMsgs <= o.distinct }).toEqual({
        ...o, requests: c.requests, failed: undefined, files: 1, rewrites: 0, leaked: [], ratioWithin: true, logsEachMessageOnce: true,
      });
    }),
    { seed, numRuns, interruptAfterTimeLimit: 40_000, markInterruptAsFailure: false },
  );
}

it('credentials in tool results and user messages: never a rewrite; the log grows with the conversation, not with its square', async () => {
  await holds(cases('messages'), 20261201, 12);
}, 90_000);

it('a credential in the system prompt: the same', async () => {
  await holds(cases('system'), 20261202, 6);
}, 90_000);

it('the measure: a 40-request session resent in full by a client without credentials stays under 1.2x', async () => {
  const o = await play({
    seed: 7, requests: 40, explicitId: false, stream: 'alternate',
    behaviour: { ...REAL_CLIENT, credentialRate: 0, userCredentialRate: 0, imageRate: 0.3, dropReasoning: 0.5, systemBytes: 3000 },
  });
  expect(o).toMatchObject({ requests: 40, files: 1, rewrites: 0 });
  expect(o.clientMsgs).toBe(o.distinct);
  expect(o.ratio).toBeLessThanOrEqual(1.2);
  expect(o.ratio).toBeGreaterThan(0.8);
});
