/** Codex's ~/.codex/config.toml for a run against the proxy (../shared/reference/agents-offline.md, Codex). */

/** The lines README.md gives, plus what keeps Codex on loopback and answering at once (agents-offline). */
export function codexConfig(model: string, baseUrl: string): string {
  return `model = "${model}"
model_provider = "prefix-proxy"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[model_providers.prefix-proxy]
name = "prefix-proxy"
base_url = "${baseUrl}/v1"
env_key = "PREFIX_PROXY_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[feedback]
enabled = false

[features]
plugins = false
apps = false
`;
}
