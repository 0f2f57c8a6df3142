/**
 * Reads a `generateContent` body as Google's API does (ai.google.dev/api/generate-content,
 * GenerateContentRequest): proto3 JSON, so each field may be written lowerCamelCase or snake_case,
 * an unknown field name is a 400, and each part holds exactly one kind of data. Also the turn
 * rules the API enforces on function calling. Messages follow the API's wording.
 */
import { invalidArgument } from './errors.js';
import { readJsonMode, type JsonMode } from './json-mode.js';

export type Json = Record<string, unknown>;

export interface Part {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string };
  fileData?: { mimeType?: string; fileUri: string };
  functionCall?: { name: string; args: Json; id?: string };
  functionResponse?: { name: string; response: Json; id?: string };
  /** executableCode, codeExecutionResult and the rest, as sent. */
  other?: Json;
}

export interface Content {
  role: 'user' | 'model';
  parts: Part[];
}

export interface Thinking {
  on: boolean;
  /** `includeThoughts`: thought summaries come back as `thought: true` parts. */
  include: boolean;
}

export interface GenerateRequest {
  contents: Content[];
  systemInstruction: Content | null;
  tools: unknown[];
  toolConfig: unknown;
  thinking: Thinking;
  maxOutputTokens: number | null;
  /** JSON mode (`responseMimeType: "application/json"`) and its schema; null when not asked. */
  json: JsonMode | null;
  /** `cachedContents/{id}` when the request reads an explicit cache. */
  cachedContent: string | null;
}

const TOP = ['model', 'contents', 'tools', 'toolConfig', 'safetySettings', 'systemInstruction', 'generationConfig', 'cachedContent', 'labels'];
const CONTENT = ['role', 'parts'];
const PART = ['text', 'thought', 'thoughtSignature', 'inlineData', 'fileData', 'functionCall', 'functionResponse', 'executableCode', 'codeExecutionResult', 'videoMetadata', 'partMetadata', 'mediaResolution'];
const DATA = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse', 'executableCode', 'codeExecutionResult'];
const GENERATION = [
  'stopSequences', 'responseMimeType', 'responseSchema', 'responseJsonSchema', 'responseModalities', 'candidateCount', 'maxOutputTokens',
  'temperature', 'topP', 'topK', 'seed', 'presencePenalty', 'frequencyPenalty', 'responseLogprobs', 'logprobs', 'enableEnhancedCivicAnswers',
  'speechConfig', 'thinkingConfig', 'mediaResolution', 'imageConfig',
];
const THINKING = ['thinkingBudget', 'includeThoughts', 'thinkingLevel'];
const LEVELS = ['THINKING_LEVEL_UNSPECIFIED', 'MINIMAL', 'LOW', 'MEDIUM', 'HIGH'];

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `thinkingConfig` -> `thinking_config`: proto3 JSON accepts the field's original name too. */
function snake(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/**
 * The object with its field names made lowerCamelCase; any name outside `known` is the API's 400.
 * `where` is the field path the API names (`contents[0].parts[1]`).
 */
export function fields(raw: unknown, known: readonly string[], where: string): Json {
  if (!isObject(raw)) throw invalidArgument(`Invalid value at '${where}', expected an object.`);
  const byName = new Map<string, string>();
  for (const name of known) {
    byName.set(name, name);
    byName.set(snake(name), name);
  }
  const out: Json = {};
  for (const [key, value] of Object.entries(raw)) {
    const name = byName.get(key);
    if (name === undefined) throw invalidArgument(`Invalid JSON payload received. Unknown name "${key}" at '${where}': Cannot find field.`);
    out[name] = value;
  }
  return out;
}

export function parseJson(text: string): Json {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw invalidArgument(`Invalid JSON payload received. ${(err as Error).message}`);
  }
  if (!isObject(body)) throw invalidArgument('Invalid JSON payload received. Expected an object.');
  return body;
}

export function parseGenerateRequest(text: string): GenerateRequest {
  return readGenerateRequest(parseJson(text), 'GenerateContentRequest');
}

export function readGenerateRequest(raw: Json, where: string): GenerateRequest {
  const body = fields(raw, TOP, '');
  const cachedContent = body.cachedContent === undefined ? null : stringAt(body.cachedContent, 'cached_content');
  const contents = readContents(body.contents, cachedContent === null, where);
  checkTurns(contents, where);
  const generation = body.generationConfig === undefined ? {} : fields(body.generationConfig, GENERATION, 'generation_config');
  const max = generation.maxOutputTokens;
  return {
    contents,
    systemInstruction: body.systemInstruction === undefined ? null : readSystemInstruction(body.systemInstruction),
    tools: body.tools === undefined ? [] : arrayAt(body.tools, 'tools'),
    toolConfig: body.toolConfig,
    thinking: readThinking(generation.thinkingConfig),
    maxOutputTokens: typeof max === 'number' && Number.isInteger(max) && max > 0 ? max : null,
    json: readJsonMode(generation),
    cachedContent,
  };
}

export function readContents(raw: unknown, required: boolean, where: string): Content[] {
  if (raw === undefined || (Array.isArray(raw) && raw.length === 0)) {
    if (required) throw invalidArgument(`* ${where}.contents: contents is not specified\n`);
    return [];
  }
  return arrayAt(raw, 'contents').map((c, i) => readContent(c, `contents[${i}]`, false));
}

/** A system instruction: a Content whose role may be left out. */
export function readSystemInstruction(raw: unknown): Content {
  return readContent(raw, 'system_instruction', true);
}

function readContent(raw: unknown, where: string, system: boolean): Content {
  const content = fields(raw, CONTENT, where);
  const role = content.role ?? (system ? 'user' : undefined);
  if (role !== 'user' && role !== 'model') {
    throw invalidArgument(`Please use a valid role: user, model. Got '${String(role)}' at '${where}.role'.`);
  }
  const parts = arrayAt(content.parts ?? [], `${where}.parts`);
  if (parts.length === 0) throw invalidArgument(`* GenerateContentRequest.${where}.parts: contents.parts must not be empty.\n`);
  return { role, parts: parts.map((p, j) => readPart(p, `${where}.parts[${j}]`)) };
}

function readPart(raw: unknown, where: string): Part {
  const p = fields(raw, PART, where);
  const data = DATA.filter((name) => p[name] !== undefined);
  if (data.length !== 1) {
    const why = data.length === 0 ? "must have one initialized field" : `has more than one initialized field: ${data.map(snake).join(', ')}`;
    throw invalidArgument(`* GenerateContentRequest.${where}.data: required oneof field 'data' ${why}\n`);
  }
  const part: Part = {};
  if (p.thought !== undefined) part.thought = booleanAt(p.thought, `${where}.thought`);
  if (p.thoughtSignature !== undefined) part.thoughtSignature = bytesAt(p.thoughtSignature, `${where}.thought_signature`);
  if (p.text !== undefined) part.text = stringAt(p.text, `${where}.text`);
  else if (p.inlineData !== undefined) {
    const d = fields(p.inlineData, ['mimeType', 'data'], `${where}.inline_data`);
    part.inlineData = { mimeType: stringAt(d.mimeType ?? '', `${where}.inline_data.mime_type`), data: bytesAt(d.data ?? '', `${where}.inline_data.data`) };
  } else if (p.fileData !== undefined) {
    const d = fields(p.fileData, ['mimeType', 'fileUri'], `${where}.file_data`);
    part.fileData = { fileUri: stringAt(d.fileUri, `${where}.file_data.file_uri`), ...(d.mimeType === undefined ? {} : { mimeType: stringAt(d.mimeType, `${where}.file_data.mime_type`) }) };
  } else if (p.functionCall !== undefined) {
    const f = fields(p.functionCall, ['id', 'name', 'args'], `${where}.function_call`);
    part.functionCall = { name: nameAt(f.name, `${where}.function_call.name`), args: structAt(f.args ?? {}, `${where}.function_call.args`) };
    if (f.id !== undefined) part.functionCall.id = stringAt(f.id, `${where}.function_call.id`);
  } else if (p.functionResponse !== undefined) {
    const f = fields(p.functionResponse, ['id', 'name', 'response', 'willContinue', 'scheduling', 'parts'], `${where}.function_response`);
    part.functionResponse = { name: nameAt(f.name, `${where}.function_response.name`), response: structAt(f.response ?? {}, `${where}.function_response.response`) };
    if (f.id !== undefined) part.functionResponse.id = stringAt(f.id, `${where}.function_response.id`);
  } else {
    part.other = { [data[0]!]: p[data[0]!] };
  }
  return part;
}

function readThinking(raw: unknown): Thinking {
  if (raw === undefined) return { on: true, include: false };
  const t = fields(raw, THINKING, 'generation_config.thinking_config');
  if (t.thinkingBudget !== undefined && t.thinkingLevel !== undefined) {
    throw invalidArgument('You can only set only one of thinking budget and thinking level.');
  }
  if (t.thinkingLevel !== undefined && !LEVELS.includes(String(t.thinkingLevel))) {
    throw invalidArgument(`Invalid value at 'generation_config.thinking_config.thinking_level' (type.googleapis.com/google.ai.generativelanguage.v1beta.ThinkingConfig.ThinkingLevel), "${String(t.thinkingLevel)}"`);
  }
  if (t.thinkingBudget !== undefined && !Number.isInteger(t.thinkingBudget)) {
    throw invalidArgument(`Invalid value at 'generation_config.thinking_config.thinking_budget' (TYPE_INT32), ${JSON.stringify(t.thinkingBudget)}`);
  }
  return { on: t.thinkingBudget !== 0, include: t.includeThoughts === true };
}

/**
 * The API's function-calling turn rules: a model turn with calls follows a user turn (or the
 * responses to earlier calls), and the turn after it answers every call, one response per call.
 */
function checkTurns(contents: readonly Content[], where: string): void {
  contents.forEach((content, i) => {
    const calls = content.parts.filter((p) => p.functionCall !== undefined).length;
    if (content.role === 'model' && calls > 0 && i > 0 && contents[i - 1]!.role !== 'user') {
      throw invalidArgument('Please ensure that function call turn comes immediately after a user turn or after a function response turn.');
    }
    const next = contents[i + 1];
    if (calls === 0 || next === undefined) return;
    const responses = next.parts.filter((p) => p.functionResponse !== undefined).length;
    if (next.role === 'user' && responses !== calls) {
      throw invalidArgument(`Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn (${where}.contents[${i + 1}]).`);
    }
  });
}

function stringAt(value: unknown, where: string): string {
  if (typeof value !== 'string') throw invalidArgument(`Invalid value at '${where}' (TYPE_STRING), ${JSON.stringify(value)}`);
  return value;
}

function nameAt(value: unknown, where: string): string {
  const name = stringAt(value ?? '', where);
  if (name === '') throw invalidArgument(`* GenerateContentRequest.${where}: name must not be empty\n`);
  return name;
}

/** A `bytes` field: base64 (standard or URL-safe alphabet). */
function bytesAt(value: unknown, where: string): string {
  const text = stringAt(value, where);
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(text)) throw invalidArgument(`Invalid value at '${where}' (TYPE_BYTES), Base64 decoding failed for "${text.slice(0, 40)}"`);
  return text;
}

function booleanAt(value: unknown, where: string): boolean {
  if (typeof value !== 'boolean') throw invalidArgument(`Invalid value at '${where}' (TYPE_BOOL), ${JSON.stringify(value)}`);
  return value;
}

function structAt(value: unknown, where: string): Json {
  if (!isObject(value)) throw invalidArgument(`Invalid value at '${where}' (type.googleapis.com/google.protobuf.Struct), ${JSON.stringify(value)}`);
  return value;
}

function arrayAt(value: unknown, where: string): unknown[] {
  if (!Array.isArray(value)) throw invalidArgument(`Invalid value at '${where}', expected a list.`);
  return value;
}

/** `models/gemini-x` or `gemini-x` -> `gemini-x`. */
export function modelId(name: string): string {
  return name.startsWith('models/') ? name.slice('models/'.length) : name;
}
