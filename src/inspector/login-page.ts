/** The plain form `/ui/` shows without credentials: no script, no style, nothing loaded from elsewhere. */

export function loginPage(message: string | undefined): string {
  const note = message === undefined ? '' : `<p role="alert">${escapeHtml(message)}</p>\n`;
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>prefix-proxy inspector: log in</title></head>
<body>
<main>
<h1>prefix-proxy inspector</h1>
${note}<form method="post" action="/ui/login">
<label for="key">Admin key</label>
<input id="key" name="key" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Log in</button>
</form>
<p>A key marked <code>admin = true</code> in <code>[auth] keys</code>, or the admin key. The browser keeps a login cookie, never the key.</p>
</main>
</body>
</html>
`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
