/**
 * Two-factor enrolment at Gitea's paths (/user/settings/security and its two_factor/ forms):
 * server-rendered pages that work without JavaScript. A browser signed in with the sign-in form
 * (routes/sign-in.ts) uses them as it is; an anonymous one is sent there first and comes back (as
 * Gitea's reqSignIn); HTTP basic (user name and password) is accepted too, for clients without
 * cookies. The forms that change an enrolment carry their own proof against forgery (the
 * enrolment form a signed secret, the others the passcode of the enrolled authenticator, which
 * another site cannot know), whichever way the browser signed in.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, NotFoundError, TooManyRequestsError, UnauthenticatedError } from '../services/errors';
import { statusOf } from '../plugins/errors';
import { escapeHtml, page, signInThrottledPage } from '../services/oauth2/pages';
import { TWO_FACTOR_REQUIRED_MESSAGE } from '../services/two-factor';
import type { User } from '../services/records';
import { OTP_HEADERS } from '../plugins/auth';
import { signInLocation } from './sign-in';

const BASE = '/user/settings/security';

const html = (reply: FastifyReply, status: number, title: string, body: string) =>
  reply.code(status).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(page(title, body));

function passcodeField(id = 'passcode', autofocus = true) {
  return `<p><label for="${id}">Passcode from your authenticator app</label><br>
<input id="${id}" name="passcode" type="text" inputmode="numeric" autocomplete="one-time-code" required${autofocus ? ' autofocus' : ''}></p>`;
}

function enrolForm(offer: { secret: string; uri: string; proof: string }, error?: string) {
  return `<h1>Enable two-factor authentication</h1>
${error ? `<p role="alert"><strong>${escapeHtml(error)}</strong></p>` : ''}
<p>Add this key to your authenticator app (or <a href="${escapeHtml(offer.uri)}">open it in the app</a>), then enter the passcode it shows.</p>
<p>Key: <code id="secret">${escapeHtml(offer.secret)}</code></p>
<form method="post" action="${BASE}/two_factor/enroll">
<input type="hidden" name="secret" value="${escapeHtml(offer.secret)}">
<input type="hidden" name="proof" value="${escapeHtml(offer.proof)}">
${passcodeField()}
<p><button type="submit">Verify</button></p>
</form>`;
}

export default async function twoFactorRoutes(app: FastifyInstance) {
  const { twoFactor } = app.services;
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => done(null, body));
  const hidden = { schema: { hide: true } };
  const form = (request: FastifyRequest) => new URLSearchParams(typeof request.body === 'string' ? request.body : '');

  /** The signed-in user, or the way to sign in sent (null): the sign-in form, or a 401 challenge for wrong basic credentials. */
  async function signedIn(request: FastifyRequest, reply: FastifyReply): Promise<User | null> {
    const browserUser = await app.services.webSessions.signedInUser(request);
    if (browserUser) return browserUser;
    if (!request.headers.authorization) {
      await reply.code(303).header('location', signInLocation(request.url)).send();
      return null;
    }
    let user;
    try {
      user = await app.auth.passwordUser(request);
    } catch (err) {
      if (!(err instanceof TooManyRequestsError)) throw err;
      await reply.code(429).header('retry-after', String(err.retryAfterSeconds)).type('text/html; charset=utf-8').send(signInThrottledPage(err.retryAfterSeconds));
      return null;
    }
    if (!user) {
      await html(reply.header('www-authenticate', 'Basic realm="Gitea"'), 401, 'Sign in', '<h1>Sign in</h1><p>Sign in with your user name and password to continue.</p>');
      return null;
    }
    return user;
  }

  /** The enrolled user's passcode (form field, or the OTP header API clients send). */
  const passcodeOf = (request: FastifyRequest) =>
    form(request).get('passcode') ?? (OTP_HEADERS.map((h) => request.headers[h]).find((v) => typeof v === 'string' && v !== '') as string | undefined) ?? '';

  const errorPage = (reply: FastifyReply, err: unknown) => {
    if (!(err instanceof DomainError)) throw err;
    return html(reply, statusOf(err), 'Two-factor authentication', `<h1>Two-factor authentication</h1><p role="alert">${escapeHtml(err.message)}</p><p><a href="${BASE}">Back to security settings</a></p>`);
  };

  /** A wrong passcode of the enrolled authenticator: a failed sign-in for the throttle, and the error page. */
  const wrongPasscode = (request: FastifyRequest, reply: FastifyReply, user: User) => {
    app.auth.secondFactorFailed(request, user);
    return errorPage(reply, new UnauthenticatedError('the passcode is not correct'));
  };

  app.get(BASE, hidden, async (request, reply) => {
    const user = await signedIn(request, reply);
    if (!user) return reply;
    if (!twoFactor.isEnrolled(user)) {
      return html(reply, 200, 'Security', `<h1>Security</h1><h2>Two-factor authentication</h2>${app.config.twoFactorAuthEnforced ? `<p role="alert"><strong>${escapeHtml(TWO_FACTOR_REQUIRED_MESSAGE)}</strong></p>` : ''}<p>Two-factor authentication is not enrolled.</p><p><a href="${BASE}/two_factor/enroll">Enable two-factor authentication</a></p>`);
    }
    return html(
      reply,
      200,
      'Security',
      `<h1>Security</h1><h2>Two-factor authentication</h2><p>Two-factor authentication is enrolled.</p>
<form method="post" action="${BASE}/two_factor/regenerate_scratch"><h3>New scratch token</h3>${passcodeField('passcode-scratch', false)}<p><button type="submit">Regenerate scratch token</button></p></form>
<form method="post" action="${BASE}/two_factor/disable"><h3>Disable</h3>${passcodeField('passcode-disable', false)}<p><button type="submit">Disable two-factor authentication</button></p></form>`,
    );
  });

  app.get(`${BASE}/two_factor/enroll`, hidden, async (request, reply) => {
    const user = await signedIn(request, reply);
    if (!user) return reply;
    try {
      return html(reply, 200, 'Enable two-factor authentication', enrolForm(await twoFactor.offer(user)));
    } catch (err) {
      return errorPage(reply, err);
    }
  });

  app.post(`${BASE}/two_factor/enroll`, hidden, async (request, reply) => {
    const user = await signedIn(request, reply);
    if (!user) return reply;
    const f = form(request);
    const offer = { secret: f.get('secret') ?? '', proof: f.get('proof') ?? '' };
    try {
      const scratch = await twoFactor.enrol(user, offer.secret, offer.proof, f.get('passcode') ?? '');
      return html(
        reply,
        200,
        'Two-factor authentication enrolled',
        `<h1>Two-factor authentication enrolled</h1>
<p>Keep this scratch token somewhere safe: it signs you in once without your authenticator. It is shown only now.</p>
<p>Scratch token: <code id="scratch-token">${escapeHtml(scratch)}</code></p>
<p><a href="${BASE}">Back to security settings</a></p>`,
      );
    } catch (err) {
      // A wrong passcode: the same key again (it may already be in the app), with the reason.
      if (err instanceof DomainError && err.message === 'the passcode is not correct') {
        const again = await twoFactor.offerFor(user, offer.secret, offer.proof);
        if (again) return html(reply, 400, 'Enable two-factor authentication', enrolForm(again, 'The passcode is not correct.'));
      }
      return errorPage(reply, err);
    }
  });

  app.post(`${BASE}/two_factor/regenerate_scratch`, hidden, async (request, reply) => {
    const user = await signedIn(request, reply);
    if (!user) return reply;
    try {
      if (!twoFactor.isEnrolled(user)) return errorPage(reply, new NotFoundError('two-factor authentication is not enrolled'));
      if (!(await twoFactor.verifyPasscode(user, passcodeOf(request)))) return wrongPasscode(request, reply, user);
      const scratch = await twoFactor.regenerateScratch(user);
      return html(reply, 200, 'New scratch token', `<h1>New scratch token</h1><p>Your previous scratch token no longer works.</p><p>Scratch token: <code id="scratch-token">${escapeHtml(scratch)}</code></p><p><a href="${BASE}">Back to security settings</a></p>`);
    } catch (err) {
      return errorPage(reply, err);
    }
  });

  app.post(`${BASE}/two_factor/disable`, hidden, async (request, reply) => {
    const user = await signedIn(request, reply);
    if (!user) return reply;
    try {
      if (!twoFactor.isEnrolled(user)) return errorPage(reply, new NotFoundError('two-factor authentication is not enrolled'));
      if (!(await twoFactor.verifyPasscode(user, passcodeOf(request)))) return wrongPasscode(request, reply, user);
      await twoFactor.disable(user);
      return html(reply, 200, 'Two-factor authentication disabled', `<h1>Two-factor authentication disabled</h1><p><a href="${BASE}">Back to security settings</a></p>`);
    } catch (err) {
      return errorPage(reply, err);
    }
  });
}
