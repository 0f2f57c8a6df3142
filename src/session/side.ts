/**
 * Side requests on the conversation's prefix (docs/how-it-works.md, Side requests; docs/decisions.md,
 * Side requests read the conversation's prefix). A compaction prompt or a title prompt that an agent
 * sends beside its conversation is recognised by its known shape, and is built as the conversation's
 * last request went (its system prompt, catalog and history, as the log holds them) with the side's
 * own instruction appended as one user message. Only the shapes below are recognised; any other
 * request is planned as before. Pure.
 */
import { COMPACTION_PROMPT_MARKER } from '../core/compaction-prompt.js';
import type { NeutralMessage, RequestParams } from '../core/types.js';
import { sameMessage, type IncomingMessage } from './incoming.js';
import { holdsLatestReply } from './plan.js';
import type { ViewEntry } from './view.js';

export type SideKind = 'compaction' | 'title';

/** A recognised side request: what the proxy appends after the conversation's history, and how tools are offered. */
export interface SideJob {
  kind: SideKind;
  /** The client the shape is known from (for the docs and the operator). */
  client: string;
  /** The one user message appended after the conversation's history. */
  instruction: string;
  /**
   * `none`: the side request offered no tools, so the conversation's catalog goes unchanged with
   * `tool_choice: "none"`; `all`: it offered the conversation's own catalog.
   */
  tools: 'none' | 'all';
}

/**
 * The known shapes. `last-user`: the marker opens the request's last user message, which follows
 * the conversation's history (or the part of it the client kept); only that message is the side's
 * own. The agent's prompt opens with it, or starts a line of it after a preamble the agent puts
 * first (`after`: Claude Code's newer compaction prompt opens with `CRITICAL: Respond with TEXT
 * ONLY`); a person's message that merely contains the marker text is the conversation's.
 * `system`: the marker is in the request's own system prompt, and its messages quote the
 * conversation (the first user message): all of them are the side's own. `system-history`: the
 * marker is in the request's own system prompt, and its messages are the conversation's history
 * and one last user message, the side's own as with `last-user`.
 */
interface Shape {
  kind: SideKind;
  client: string;
  where: 'last-user' | 'system' | 'system-history';
  marker: string;
  /** `last-user`: a preamble the message may open with, the marker then starting a line of it. */
  after?: string;
}

/** Each marker is a line of the agent's own prompt (docs/how-it-works.md, Side requests, lists them). */
export const SIDE_SHAPES: readonly Shape[] = [
  { kind: 'compaction', client: 'opencode', where: 'last-user', marker: 'Provide a detailed prompt for continuing our conversation above' },
  { kind: 'compaction', client: 'Claude Code', where: 'last-user', marker: 'Your task is to create a detailed summary of the conversation so far', after: 'CRITICAL: Respond with TEXT ONLY' },
  { kind: 'compaction', client: 'Codex', where: 'last-user', marker: 'You are performing a CONTEXT CHECKPOINT COMPACTION' },
  // Qwen Code asks on the conversation's own head first, and when that reply is not a summary, again
  // under the summariser's own system prompt and no tools, the same history and a shorter ask.
  { kind: 'compaction', client: 'Qwen Code', where: 'last-user', marker: 'You are the component that summarizes a conversation when its context window is about to overflow' },
  { kind: 'compaction', client: 'Qwen Code', where: 'system-history', marker: 'You are the component that summarizes a conversation when its context window is about to overflow' },
  // The proxy's own prompt, which a Responses compaction ask becomes: a `compaction_trigger` (Codex's
  // remote compaction) or `POST /v1/responses/compact` (the SDK's `responses.compact`).
  { kind: 'compaction', client: 'Responses compaction', where: 'last-user', marker: COMPACTION_PROMPT_MARKER },
  { kind: 'title', client: 'Codex', where: 'last-user', marker: 'Generate a concise, single-line task title' },
  { kind: 'title', client: 'opencode', where: 'system', marker: 'You are a title generator' },
  { kind: 'title', client: 'Claude Code', where: 'system', marker: 'You are naming a coding session' },
  // Gemini CLI's task router: its own system prompt and the conversation's last turns, a side job of the title kind.
  { kind: 'title', client: 'Gemini CLI', where: 'system', marker: 'You are a specialized Task Routing AI' },
];

export interface SideCandidate {
  /** The request's leading system prompt, as the log would hold it. */
  system: string | undefined;
  /** The request offered no tools. */
  noTools: boolean;
  /** The request's catalog is the conversation's (canonically). */
  sameCatalog: boolean;
  messages: readonly IncomingMessage[];
}

export interface SideConversation {
  system: string | undefined;
  entries: readonly ViewEntry[];
}

/**
 * The side job a request is, or undefined (then it is planned as any request). Recognised only when
 * the conversation has a history, the request's tools are none or the conversation's own (a subset
 * cannot be offered over an unchanged catalog on every wire: Anthropic has no such setting), every
 * message the side keeps is a user message of text, for a `last-user` or `system-history` shape the
 * request opens as the conversation did (its first message is the conversation's first) or holds
 * the conversation's latest reply, and for a `system` shape the system prompt is not the conversation's.
 */
export function recogniseSide(req: SideCandidate, conv: SideConversation): SideJob | undefined {
  if (conv.entries.length === 0 || req.messages.length === 0) return undefined;
  if (!req.noTools && !req.sameCatalog) return undefined;
  const last = req.messages[req.messages.length - 1]!.msg;
  const lastText = userText(last);
  // A system prompt is the side's only where it is not the conversation's (a conversation that is
  // itself a title generator is a conversation).
  const ownSystem = req.system !== undefined && req.system !== conv.system;
  const shape = SIDE_SHAPES.find((s) => (s.where === 'last-user' ? lastText !== undefined && opensWith(lastText, s) : ownSystem && req.system!.includes(s.marker)));
  if (shape === undefined) return undefined;
  let own: readonly NeutralMessage[];
  if (shape.where !== 'system') {
    // The conversation's own history: it opens as the conversation did, or (the client edited its
    // first message: Qwen Code adds a reminder to it after a compaction) still holds its latest reply.
    if (req.messages.length < 2) return undefined;
    if (!sameMessage(conv.entries[0]!, req.messages[0]!) && !holdsLatestReply(conv.entries, req.messages)) return undefined;
    own = [last];
  } else {
    own = req.messages.map((m) => m.msg);
  }
  const texts = own.map(userText);
  if (texts.some((t) => t === undefined)) return undefined;
  // The side's own system prompt, where it is not the conversation's, is part of what it asks.
  const head = ownSystem ? [req.system!] : [];
  return { kind: shape.kind, client: shape.client, instruction: [...head, ...(texts as string[])].join('\n\n'), tools: req.sameCatalog ? 'all' : 'none' };
}

/**
 * The request's parameters for a side job. Those the upstream's cache is keyed on (`keyed`, the
 * dialect's) are the conversation's last request's, so its cached messages still hold. A side request
 * that offered no tools is sent `tool_choice: "none"` where the choice is not keyed: OpenAI's caching
 * guide asks for that instead of removing the tools. Where it is keyed (Anthropic), the conversation's
 * choice stays and the side's instruction is what keeps the model from calling a tool.
 */
export function sideParams(params: RequestParams, job: SideJob, conversation: RequestParams | undefined, keyed: readonly (keyof RequestParams)[]): RequestParams {
  const out: Record<string, unknown> = { ...params };
  const from = (conversation ?? {}) as Record<string, unknown>;
  for (const k of keyed) {
    if (from[k] === undefined) delete out[k];
    else out[k] = from[k];
  }
  if (job.tools === 'none' && !keyed.includes('tool_choice')) out.tool_choice = 'none';
  return out as RequestParams;
}

/** The agent's prompt: the text opens with the marker, or with the shape's preamble and a line that opens with the marker. */
function opensWith(text: string, shape: Shape): boolean {
  const t = text.trimStart();
  if (t.startsWith(shape.marker)) return true;
  return shape.after !== undefined && t.startsWith(shape.after) && t.includes('\n' + shape.marker);
}

/** A user message's text (its text parts joined), or undefined for anything else. */
function userText(msg: NeutralMessage): string | undefined {
  if (msg.role !== 'user') return undefined;
  if (typeof msg.content === 'string') return msg.content;
  if (!msg.content.every((p) => p.type === 'text')) return undefined;
  return msg.content.map((p) => (p.type === 'text' ? p.text : '')).join('\n');
}
