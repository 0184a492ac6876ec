/**
 * The sign-in form at Gitea's paths: /user/login (user name or e-mail address and password) and,
 * for an account enrolled in two-factor authentication, /user/two_factor (the passcode, or the
 * scratch token). Where a page needs a signed-in browser (the OAuth2 authorization) it sends it
 * here with `redirect_to`, and a completed sign-in goes back there; /user/logout signs the browser
 * out. Plain HTML forms that work
 * without JavaScript; the sign-in state is a signed cookie (services/web-session.ts).
 *
 * Answers as Gitea 1.27.3's: a wrong password or passcode shows the form again (200) with Gitea's
 * message and the user name kept; a right password of an enrolled account goes on to the passcode
 * step (303). Unlike Gitea, failures count for the sign-in throttle (429 while too many), and a
 * form not sent from the forge's own page is refused (400, the form again with a fresh token).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { TooManyRequestsError } from '../services/errors';
import { escapeHtml, page, signInThrottledPage } from '../services/oauth2/pages';
import { CSRF_FIELD, localRedirect } from '../services/web-session';

export const SIGN_IN_PATH = '/user/login';
/** Gitea's sign-out: a GET (no form, no token), which ends the browser's session and goes to the home page. */
export const SIGN_OUT_PATH = '/user/logout';
const TWO_FACTOR_PATH = '/user/two_factor';

/** Gitea's messages (its locale's form.username_password_incorrect and auth.twofa_passcode_incorrect). */
const WRONG_PASSWORD = 'Username or password is incorrect.';
const WRONG_PASSCODE = 'Your passcode is incorrect. If you misplaced your device, use your scratch code to sign in.';
const FORM_EXPIRED = 'The form could not be verified (it did not come from this site, or it expired). Try again.';

/** Where the sign-in form sends the browser back to (Gitea's /user/login?redirect_to=). */
export function signInLocation(backTo: string): string {
  return `${SIGN_IN_PATH}?${new URLSearchParams({ redirect_to: backTo })}`;
}

const alert = (message: string) => (message ? `<p role="alert"><strong>${escapeHtml(message)}</strong></p>\n` : '');

function signInPage(opts: { csrf: string; redirectTo: string; userName?: string; error?: string }) {
  return page(
    'Sign In',
    `<h1>Sign In</h1>
${alert(opts.error ?? '')}<form method="post" action="${SIGN_IN_PATH}">
<input type="hidden" name="${CSRF_FIELD}" value="${escapeHtml(opts.csrf)}">
<input type="hidden" name="redirect_to" value="${escapeHtml(opts.redirectTo)}">
<p><label for="user_name">Username or Email Address</label><br>
<input id="user_name" name="user_name" type="text" value="${escapeHtml(opts.userName ?? '')}" autocomplete="username" required${opts.userName ? '' : ' autofocus'}></p>
<p><label for="password">Password</label><br>
<input id="password" name="password" type="password" autocomplete="current-password" required${opts.userName ? ' autofocus' : ''}></p>
<p><button type="submit">Sign In</button></p>
</form>`,
  );
}

function twoFactorPage(opts: { csrf: string; redirectTo: string; error?: string }) {
  return page(
    'Two-Factor Authentication',
    `<h1>Two-Factor Authentication</h1>
${alert(opts.error ?? '')}<form method="post" action="${TWO_FACTOR_PATH}">
<input type="hidden" name="${CSRF_FIELD}" value="${escapeHtml(opts.csrf)}">
<input type="hidden" name="redirect_to" value="${escapeHtml(opts.redirectTo)}">
<p><label for="passcode">Passcode (or scratch code)</label><br>
<input id="passcode" name="passcode" type="text" autocomplete="one-time-code" required autofocus></p>
<p><button type="submit">Verify</button></p>
</form>`,
  );
}

export default async function signInRoutes(app: FastifyInstance) {
  const { webSessions, twoFactor } = app.services;
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => done(null, body));
  const hidden = { schema: { hide: true } };
  const form = (request: FastifyRequest) => new URLSearchParams(typeof request.body === 'string' ? request.body : '');
  const query = (request: FastifyRequest) => new URL(request.url, 'http://forge.invalid').searchParams;
  const html = (reply: FastifyReply, status: number, body: string) => reply.code(status).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(body);
  const throttled = (reply: FastifyReply, err: unknown) => {
    if (!(err instanceof TooManyRequestsError)) throw err;
    return html(reply.header('retry-after', String(err.retryAfterSeconds)), 429, signInThrottledPage(err.retryAfterSeconds));
  };

  app.get(SIGN_IN_PATH, hidden, async (request, reply) => {
    const redirectTo = localRedirect(query(request).get('redirect_to'));
    // Gitea: a signed-in browser is sent on where it was going.
    if (await webSessions.signedInUser(request)) return reply.code(303).header('location', redirectTo).send();
    return html(reply, 200, signInPage({ csrf: await webSessions.csrfToken(request, reply), redirectTo }));
  });

  app.post(SIGN_IN_PATH, hidden, async (request, reply) => {
    const f = form(request);
    const redirectTo = localRedirect(f.get('redirect_to'));
    const userName = f.get('user_name') ?? '';
    if (!(await webSessions.formFromForge(request, f, app.config.rootUrl))) {
      return html(reply, 400, signInPage({ csrf: await webSessions.csrfToken(request, reply), redirectTo, userName, error: FORM_EXPIRED }));
    }
    let user;
    try {
      user = await app.auth.formSignIn(request, userName, f.get('password') ?? '');
    } catch (err) {
      return throttled(reply, err);
    }
    if (!user) return html(reply, 200, signInPage({ csrf: await webSessions.csrfToken(request, reply), redirectTo, userName, error: WRONG_PASSWORD }));
    if (twoFactor.isEnrolled(user)) {
      await webSessions.awaitSecondFactor(reply, user);
      return reply.code(303).header('location', `${TWO_FACTOR_PATH}?${new URLSearchParams({ redirect_to: redirectTo })}`).send();
    }
    app.auth.signedIn(request, user);
    await webSessions.signIn(reply, user);
    return reply.code(303).header('location', redirectTo).send();
  });

  app.get(SIGN_OUT_PATH, hidden, async (request, reply) => {
    await webSessions.signOut(request, reply);
    // Gitea's home: the site's sub-path.
    return reply.code(303).header('location', new URL(app.config.rootUrl).pathname).send();
  });

  app.get(TWO_FACTOR_PATH, hidden, async (request, reply) => {
    const redirectTo = localRedirect(query(request).get('redirect_to'));
    if (!(await webSessions.pendingSecondFactor(request))) return reply.code(303).header('location', signInLocation(redirectTo)).send();
    return html(reply, 200, twoFactorPage({ csrf: await webSessions.csrfToken(request, reply), redirectTo }));
  });

  app.post(TWO_FACTOR_PATH, hidden, async (request, reply) => {
    const f = form(request);
    const redirectTo = localRedirect(f.get('redirect_to'));
    const user = await webSessions.pendingSecondFactor(request);
    if (!user) return reply.code(303).header('location', signInLocation(redirectTo)).send();
    if (!(await webSessions.formFromForge(request, f, app.config.rootUrl))) {
      return html(reply, 400, twoFactorPage({ csrf: await webSessions.csrfToken(request, reply), redirectTo, error: FORM_EXPIRED }));
    }
    try {
      app.auth.secondFactorAllowed(request, user);
    } catch (err) {
      return throttled(reply, err);
    }
    if (!(await twoFactor.verifySecondFactor(user, f.get('passcode') ?? ''))) {
      app.auth.secondFactorFailed(request, user);
      return html(reply, 200, twoFactorPage({ csrf: await webSessions.csrfToken(request, reply), redirectTo, error: WRONG_PASSCODE }));
    }
    app.auth.signedIn(request, user);
    await webSessions.signIn(reply, user);
    return reply.code(303).header('location', redirectTo).send();
  });
}
