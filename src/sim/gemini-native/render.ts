/**
 * Renders a Gemini request as the simulated model reads it: tools, the system instruction, then
 * each content from its own parts only, so a request whose contents extend another's renders to
 * text that extends the other's (the prefix the implicit cache and a `cachedContents` entry hold).
 * A thought signature renders as the thinking it stands for, where it comes back; a call's
 * arguments and a response render as canonical JSON (a Struct has no key order).
 */
import { canonicalJson, sha256Hex } from '../hash.js';
import { open, SKIP_SIGNATURE } from './signatures.js';
import type { Content, Part } from './request.js';

const END = '<|end|>\n';

/** What a prompt is made of: a `cachedContents` entry's, or a request's (with its cache's first). */
export interface Prompt {
  tools: readonly unknown[];
  systemInstruction: Content | null;
  contents: readonly Content[];
}

export function renderPrompt(prompt: Prompt): string {
  let out = '';
  for (const tool of prompt.tools) out += `<|tool|>${canonicalJson(tool)}${END}`;
  if (prompt.systemInstruction !== null) out += `<|start|>system\n${prompt.systemInstruction.parts.map(renderPart).join('')}${END}`;
  for (const content of prompt.contents) out += `<|start|>${content.role}\n${content.parts.map(renderPart).join('')}${END}`;
  return out;
}

function renderPart(part: Part): string {
  let out = '';
  const signature = part.thoughtSignature;
  if (signature !== undefined && signature !== SKIP_SIGNATURE) out += `<think>${open(signature)?.thinking ?? ''}</think>`;
  if (part.text !== undefined) out += part.thought === true ? `<thought>${part.text}</thought>` : part.text;
  else if (part.functionCall !== undefined) out += `<call name=${part.functionCall.name}>${canonicalJson(part.functionCall.args)}</call>`;
  else if (part.functionResponse !== undefined) out += `<response name=${part.functionResponse.name}>${canonicalJson(part.functionResponse.response)}</response>`;
  else if (part.inlineData !== undefined) out += `<blob ${part.inlineData.mimeType} ${sha256Hex(part.inlineData.data).slice(0, 16)}>`;
  else if (part.fileData !== undefined) out += `<file ${sha256Hex(part.fileData.fileUri).slice(0, 16)}>`;
  else if (part.other !== undefined) out += canonicalJson(part.other);
  return out;
}

/** The text the reply's directives are read from: the last content's text and function responses. */
export function lastTurnText(contents: readonly Content[]): string {
  const last = contents.at(-1);
  if (last === undefined) return '';
  return last.parts
    .map((p) => p.text ?? (p.functionResponse === undefined ? '' : directiveText(p.functionResponse.response)))
    .join('\n');
}

/** A function response's text: its string members (an agent's tool output is `{output: "..."}`). */
function directiveText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(directiveText).join('\n');
  if (typeof value === 'object' && value !== null) return Object.values(value).map(directiveText).join('\n');
  return '';
}
