/** Codex's ~/.codex/config.toml for a run against the proxy (../shared/reference/agents-offline.md, Codex). */

export interface CodexConfigOptions {
  /**
   * Codex's built-in `openai` provider at the proxy (`openai_base_url`), which compacts on the
   * server, past `autoCompactTokens`; otherwise the custom provider README.md gives.
   */
  builtIn?: { autoCompactTokens: number };
}

/** The lines README.md gives, plus what keeps Codex on loopback and answering at once (agents-offline). */
export function codexConfig(model: string, baseUrl: string, opts: CodexConfigOptions = {}): string {
  const provider = opts.builtIn === undefined
    ? `model_provider = "prefix-proxy"\n`
    : `openai_base_url = "${baseUrl}/v1"\nmodel_auto_compact_token_limit = ${opts.builtIn.autoCompactTokens}\n`;
  const custom = opts.builtIn !== undefined ? '' : `
[model_providers.prefix-proxy]
name = "prefix-proxy"
base_url = "${baseUrl}/v1"
env_key = "PREFIX_PROXY_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
`;
  return `model = "${model}"
${provider}approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false
${custom}
[analytics]
enabled = false

[feedback]
enabled = false

[features]
plugins = false
apps = false
`;
}
