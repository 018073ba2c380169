/**
 * The provider's server-rendered pages: sign-in, consent and error. Self-contained HTML (one inline
 * style sheet, no scripts, no external assets); every interpolated value goes through `escapeHtml`.
 */

/** Escapes text for HTML element content and double-quoted attribute values. */
export function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

const STYLE = `body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#222}
h1{font-size:1.4rem}form{display:flex;flex-direction:column;gap:.6rem}label{display:flex;flex-direction:column;gap:.2rem}
input[type=text],input[type=password]{padding:.45rem;font-size:1rem}button{padding:.5rem 1rem;font-size:1rem;cursor:pointer}
.error{color:#a00;border:1px solid #a00;padding:.5rem}.buttons{flex-direction:row;gap:.6rem}code{word-break:break-all}`;

/** Headers every provider page carries: no caching, no framing, nothing loaded from elsewhere. */
export const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
} as const;

function page(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} - forge</title><style>${STYLE}</style></head>
<body><main>${body}</main></body></html>
`;
}

function hidden(fields: Record<string, string>): string {
  return Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('\n');
}

/** The sign-in form (Gitea's `/user/login`). */
export function signInPage(input: {
  /** Where the form posts (`<app path>user/login`, so it works behind a path prefix). */
  action: string;
  csrf: string;
  redirectTo: string;
  username?: string;
  error?: string;
}): string {
  return page(
    'Sign in',
    `<h1>Sign in</h1>
${input.error ? `<p class="error" role="alert">${escapeHtml(input.error)}</p>` : ''}
<form method="post" action="${escapeHtml(input.action)}">
${hidden({ _csrf: input.csrf, redirect_to: input.redirectTo })}
<label>Username or email address<input type="text" name="user_name" autocomplete="username" required autofocus value="${escapeHtml(input.username ?? '')}"></label>
<label>Password<input type="password" name="password" autocomplete="current-password" required></label>
<button type="submit" id="sign-in">Sign in</button>
</form>`,
  );
}

/** The consent form (Gitea's `user/auth/grant`): the application, who asks, where the user will be sent. */
export function consentPage(input: {
  /** Where the form posts (`<app path>login/oauth/grant`). */
  action: string;
  csrf: string;
  userName: string;
  applicationName: string;
  ownerName: string;
  redirectUri: string;
  scopes: string[];
  fields: Record<string, string>;
}): string {
  const scopes = input.scopes.length
    ? `<ul>${input.scopes.map((s) => `<li><code>${escapeHtml(s)}</code></li>`).join('')}</ul>`
    : '<p>No additional scopes: the application gets full access to your account through the API.</p>';
  return page(
    'Authorize application',
    `<h1>Authorize ${escapeHtml(input.applicationName)}</h1>
<p>Signed in as <strong>${escapeHtml(input.userName)}</strong>.</p>
<p>The application <strong>${escapeHtml(input.applicationName)}</strong>, registered by <strong>${escapeHtml(input.ownerName)}</strong>, asks for access to your account.</p>
${scopes}
<p>You will be redirected to <code>${escapeHtml(input.redirectUri)}</code>.</p>
<form method="post" action="${escapeHtml(input.action)}">
${hidden({ _csrf: input.csrf, ...input.fields })}
<div class="buttons">
<button type="submit" name="granted" value="true" id="authorize">Authorize application</button>
<button type="submit" name="granted" value="false" id="cancel">Cancel</button>
</div>
</form>`,
  );
}

/** An error shown instead of redirecting (Gitea's `grant_error`): the redirect URI cannot be trusted. */
export function errorPage(title: string, description: string): string {
  return page(
    title,
    `<h1>${escapeHtml(title)}</h1><p class="error" role="alert">${escapeHtml(description)}</p>`,
  );
}
