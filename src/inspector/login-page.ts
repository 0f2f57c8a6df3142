/** The plain form `/ui/` shows without credentials: no script, no style, nothing loaded from elsewhere. */

export function loginPage(message: string | undefined): string {
  const note = message === undefined ? '' : `<p role="alert" class="status error">${escapeHtml(message)}</p>\n`;
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>prefix-proxy inspector: log in</title><link rel="stylesheet" href="/ui/app.css"></head>
<body>
<header class="top"><p class="brand">prefix-proxy <span>inspector</span></p></header>
<main>
<h1>Log in</h1>
${note}<form method="post" action="/ui/login" class="filters">
<label for="key">Admin key
<input id="key" name="key" type="password" autocomplete="current-password" required autofocus></label>
<button type="submit">Log in</button>
</form>
<p class="muted">A key marked <code>admin = true</code> in <code>[auth] keys</code>, or the admin key. The browser keeps a login cookie, never the key.</p>
</main>
</body>
</html>
`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
