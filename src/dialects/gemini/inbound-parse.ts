/**
 * The inbound wire: a Gemini API request body (`generateContent`, `streamGenerateContent`,
 * `countTokens`), validated with the schema below, every 400 naming the field
 * (`contents[3].parts[0].functionResponse.name`). Shapes follow googleapis/js-genai `src/types.ts`
 * (`GenerateContentParameters` as the REST body carries it); unknown fields of the body and of a
 * part pass the schema, parts the neutral request cannot hold are refused by name.
 */
import { z } from 'zod';
import { ProxyError } from '../../core/errors.js';
import { checkBodyShape, issueError, requireObject } from '../client-body.js';

const functionCall = z.object({ id: z.string().optional(), name: z.string().min(1), args: z.record(z.string(), z.unknown()).nullable().optional() }).loose();
const functionResponse = z.object({ id: z.string().optional(), name: z.string().min(1), response: z.record(z.string(), z.unknown()).nullable().optional() }).loose();
const part = z.object({
  text: z.string().optional(),
  thought: z.boolean().optional(),
  thoughtSignature: z.string().optional(),
  inlineData: z.object({ mimeType: z.string().min(1), data: z.string().min(1) }).loose().optional(),
  functionCall: functionCall.optional(),
  functionResponse: functionResponse.optional(),
}).loose();

/** Parts with a meaning the neutral request has no place for: a 400 naming them, never a silent drop. */
const REFUSED_PARTS = ['fileData', 'executableCode', 'codeExecutionResult', 'videoMetadata'] as const;

const content = z.object({ role: z.enum(['user', 'model', 'function']).optional(), parts: z.array(part) }).loose();

const declaration = z.object({
  name: z.string().min(1),
  description: z.string().optional(),
  parameters: z.unknown().optional(),
  parametersJsonSchema: z.unknown().optional(),
}).loose();
/** Function tools; Google's own (`googleSearch`, `codeExecution`, ...) run at Google and are left out. */
const tool = z.object({ functionDeclarations: z.array(declaration).optional() }).loose();

const toolConfig = z.object({
  functionCallingConfig: z.object({
    mode: z.enum(['MODE_UNSPECIFIED', 'AUTO', 'ANY', 'NONE', 'VALIDATED']).optional(),
    allowedFunctionNames: z.array(z.string()).optional(),
  }).loose().optional(),
}).loose();

const thinkingConfig = z.object({
  includeThoughts: z.boolean().optional(),
  thinkingBudget: z.number().int().min(-1).optional(),
  thinkingLevel: z.enum(['THINKING_LEVEL_UNSPECIFIED', 'MINIMAL', 'LOW', 'MEDIUM', 'HIGH']).optional(),
}).loose();

const generationConfig = z.object({
  temperature: z.number().min(0).max(2).optional(),
  topP: z.number().min(0).max(1).optional(),
  maxOutputTokens: z.number().int().positive().optional(),
  stopSequences: z.array(z.string()).optional(),
  seed: z.number().int().optional(),
  presencePenalty: z.number().optional(),
  frequencyPenalty: z.number().optional(),
  responseMimeType: z.string().optional(),
  responseSchema: z.unknown().optional(),
  responseJsonSchema: z.unknown().optional(),
  thinkingConfig: thinkingConfig.optional(),
}).loose();

const systemInstruction = z.union([z.string(), z.object({ parts: z.array(part) }).loose()]);

const request = z.object({
  model: z.string().optional(),
  contents: z.array(z.unknown()),
  systemInstruction: systemInstruction.optional(),
  tools: z.array(tool).optional(),
  toolConfig: toolConfig.optional(),
  generationConfig: generationConfig.optional(),
}).loose();

/** The top-level fields the proxy reads; the rest (`safetySettings`, `labels`, ...) pass to a Gemini upstream only. */
export const READ_FIELDS: ReadonlySet<string> = new Set(['model', 'contents', 'systemInstruction', 'tools', 'toolConfig', 'generationConfig']);
/** The `generationConfig` members the proxy reads; the rest (`topK`, `candidateCount`, ...) go to a Gemini upstream only. */
export const READ_GENERATION: ReadonlySet<string> = new Set(Object.keys(generationConfig.shape));

export type ClientPart = z.infer<typeof part>;
export type ClientContent = z.infer<typeof content>;
export type GeminiRequest = z.infer<typeof request>;
export type ClientTool = z.infer<typeof tool>;

export interface ParsedGemini {
  body: GeminiRequest;
  contents: ClientContent[];
}

/**
 * Validate a parsed JSON body; throws a ProxyError naming the first bad field. A count's body may
 * wrap the request as `generateContentRequest` (the REST form of `countTokens`).
 */
export function parseGeminiRequest(raw: unknown, opts: { count?: boolean } = {}): ParsedGemini {
  requireObject(raw);
  const wrapped = opts.count === true && raw.generateContentRequest !== undefined;
  const inner: unknown = wrapped ? raw.generateContentRequest : raw;
  const prefix = wrapped ? 'generateContentRequest' : '';
  requireObject(inner, wrapped ? prefix : undefined);
  checkBodyShape(inner, 'contents');
  const top = request.safeParse(inner);
  if (!top.success) throw issueError(top.error.issues[0]!, prefix);
  const at = prefix === '' ? '' : `${prefix}.`;
  const contents = top.data.contents.map((c, i) => parseContent(c, `${at}contents[${i}]`));
  return { body: top.data, contents };
}

function parseContent(raw: unknown, param: string): ClientContent {
  const parsed = content.safeParse(raw);
  if (!parsed.success) throw issueError(parsed.error.issues[0]!, param);
  parsed.data.parts.forEach((p, j) => {
    for (const name of REFUSED_PARTS) {
      if (Object.hasOwn(p, name)) {
        const field = `${param}.parts[${j}].${name}`;
        throw new ProxyError('invalid_request', { detail: `Unsupported part '${field}': the proxy carries text, inline data, function calls and function responses.` }, { param: field });
      }
    }
  });
  return parsed.data;
}
