/**
 * Window recipe versions. A log replays under the version it recorded; a version this build does
 * not know fails explicitly (docs/architecture.md 4). The window knows no file or line: it throws with both
 * empty, and the caller that read the event re-raises with `err.at(file, line)`.
 */
import { ProxyError } from '../core/errors.js';
import { WINDOW_VERSIONS, type Recipe, type WindowVersion } from '../core/events.js';

export class UnknownRecipeVersionError extends ProxyError {
  readonly version: string;

  constructor(version: string, file = '', line: string | number = '') {
    super('unknown_recipe_version', { file, line, version, known: WINDOW_VERSIONS.join(', ') });
    this.version = version;
  }

  /** The same error, naming where the recipe was read. */
  at(file: string, line: number): UnknownRecipeVersionError {
    return new UnknownRecipeVersionError(this.version, file, line);
  }
}

/**
 * What a window version decides differently from the one before it. Code that depends on the
 * version reads these rules, never the version's name.
 */
export interface VersionRules {
  /** A run of adjacent elided replies is one placeholder naming its span (docs/decisions.md, Placeholders that do not pile up). */
  readonly mergeElided: boolean;
  /** A trim folds superseded tool results to one-line stand-ins, unless the recipe says `folds: false` (docs/decisions.md, Folds and per-tool caps). */
  readonly folds: boolean;
  /** Results are capped by tool (`tool_caps`), a whole-file read at twice its cap (same section). */
  readonly toolCaps: boolean;
  /**
   * Tool results the client cleared (`client.msg` `cleared`) are elisions it already made: a trim
   * elides them all first (docs/decisions/0005-client-clearing.md).
   */
  readonly clientClears: boolean;
  /** A trim that elides a fold's successor elides the stand-in naming it too (same record). */
  readonly standInsFollow: boolean;
}

const RULES: Record<WindowVersion, VersionRules> = {
  'window-v1': { mergeElided: false, folds: false, toolCaps: false, clientClears: false, standInsFollow: false },
  'window-v2': { mergeElided: true, folds: false, toolCaps: false, clientClears: false, standInsFollow: false },
  'window-v3': { mergeElided: true, folds: true, toolCaps: true, clientClears: false, standInsFollow: false },
  'window-v4': { mergeElided: true, folds: true, toolCaps: true, clientClears: true, standInsFollow: true },
};

export function rulesOf(version: WindowVersion): VersionRules {
  return RULES[version];
}

/** Whether a trim under this recipe folds superseded results. */
export function foldsUnder(recipe: Recipe): boolean {
  return RULES[recipe.version].folds && recipe.folds !== false;
}

export function isKnownVersion(version: string): version is WindowVersion {
  return (WINDOW_VERSIONS as readonly string[]).includes(version);
}

/** Throws UnknownRecipeVersionError unless this build knows the recipe's version. */
export function checkRecipe(recipe: Recipe): void {
  const version = String((recipe as { version: unknown }).version);
  if (!isKnownVersion(version)) throw new UnknownRecipeVersionError(version);
}
