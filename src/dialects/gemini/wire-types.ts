/**
 * The Gemini API's shapes (`generateContent`, `streamGenerateContent?alt=sse`, `countTokens`), as
 * googleapis/js-genai `src/types.ts` names them (`Content`, `Part`, `GenerateContentResponse`,
 * `UsageMetadata`) and ai.google.dev/api/generate-content describes them. Only what this dialect
 * writes or reads; the inbound schema (inbound-parse.ts) lets other fields through.
 */

export interface WireFunctionCall {
  id?: string;
  name: string;
  args?: Record<string, unknown>;
}

export interface WireFunctionResponse {
  id?: string;
  name: string;
  response: Record<string, unknown>;
}

export interface WireBlob {
  mimeType: string;
  /** Base64. */
  data: string;
}

/** One part: exactly one of text, inlineData, functionCall, functionResponse (here). */
export interface WirePart {
  text?: string;
  /** The text is the model's thought summary (`includeThoughts`). */
  thought?: boolean;
  /** Opaque, bound to the model that made it; goes back on the part that carried it. */
  thoughtSignature?: string;
  inlineData?: WireBlob;
  functionCall?: WireFunctionCall;
  functionResponse?: WireFunctionResponse;
}

export interface WireContent {
  role: 'user' | 'model';
  parts: WirePart[];
}

export interface WireFunctionDeclaration {
  name: string;
  description?: string;
  /** OpenAPI-subset schema. */
  parameters?: unknown;
  /** JSON Schema (the form Gemini CLI sends). */
  parametersJsonSchema?: unknown;
}

export interface WireTool {
  functionDeclarations: WireFunctionDeclaration[];
}

export interface WireToolConfig {
  functionCallingConfig: { mode: 'AUTO' | 'ANY' | 'NONE' | 'VALIDATED'; allowedFunctionNames?: string[] };
}

export interface WireThinkingConfig {
  includeThoughts?: boolean;
  thinkingBudget?: number;
  thinkingLevel?: 'MINIMAL' | 'LOW' | 'MEDIUM' | 'HIGH';
}

export interface WireGenerationConfig {
  temperature?: number;
  topP?: number;
  topK?: number;
  maxOutputTokens?: number;
  stopSequences?: string[];
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  responseMimeType?: string;
  responseSchema?: unknown;
  responseJsonSchema?: unknown;
  thinkingConfig?: WireThinkingConfig;
}

export interface WireGenerateContentRequest {
  contents: WireContent[];
  systemInstruction?: { parts: { text: string }[] };
  tools?: WireTool[];
  toolConfig?: WireToolConfig;
  generationConfig?: WireGenerationConfig;
  cachedContent?: string;
}

export type WireFinishReason =
  | 'FINISH_REASON_UNSPECIFIED' | 'STOP' | 'MAX_TOKENS' | 'SAFETY' | 'RECITATION' | 'LANGUAGE' | 'OTHER' | 'BLOCKLIST'
  | 'PROHIBITED_CONTENT' | 'SPII' | 'MALFORMED_FUNCTION_CALL' | 'IMAGE_SAFETY' | 'UNEXPECTED_TOOL_CALL';

export interface WireUsageMetadata {
  /** The whole prompt, cached tokens included. */
  promptTokenCount?: number;
  cachedContentTokenCount?: number;
  /** The answer, thoughts excluded. */
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
  totalTokenCount?: number;
}

export interface WireCandidate {
  content?: { role?: string; parts?: WirePart[] };
  finishReason?: WireFinishReason;
  index?: number;
}

/** A whole reply, and each chunk of a stream (every SSE `data:` is one of these). */
export interface WireGenerateContentResponse {
  candidates?: WireCandidate[];
  usageMetadata?: WireUsageMetadata;
  modelVersion?: string;
  responseId?: string;
}

/** `google.rpc.Status` in its JSON envelope: every error body, and an error inside a stream. */
export interface WireError {
  error: { code: number; message: string; status: string; details?: unknown[] };
}
