/**
 * The provider's HTML pages (sign-in, consent, errors): plain server-rendered documents that work
 * without JavaScript. Every value put into a page goes through escapeHtml.
 */

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

export function page(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title></head>
<body><main>
${body}
</main></body></html>
`;
}

/** Gitea's page for an authorization request that cannot be sent back to the client. */
export function authorizationFailedPage(description: string, extraHtml = ''): string {
  return page(
    'Authorization failed',
    `<h1>Authorization failed</h1>
<p role="alert">${escapeHtml(description)}</p>
<p>The application sent an authorization request the forge cannot accept. Tell the application's maintainers.</p>${extraHtml ? `\n${extraHtml}` : ''}`,
  );
}

/** The sign-in page's refusal while the client has failed too often (sent with 429 and Retry-After). */
export function signInThrottledPage(retryAfterSeconds: number): string {
  const minutes = Math.ceil(retryAfterSeconds / 60);
  return page(
    'Too many sign-in attempts',
    `<h1>Too many sign-in attempts</h1>
<p role="alert">Signing in to this account failed too often. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.</p>`,
  );
}
