/**
 * How a chat service's message travels, where it differs from the common POST of JSON with
 * Gitea's X-Gitea-* / X-Gogs-* / X-GitHub-* headers:
 * - matrix: PUT at the hook URL (the room's .../send/m.room.message) plus a transaction id, the
 *   SHA-1 of the body, so a retried delivery is one message in the room, not two;
 * - feishu: no X-* headers at all; with a secret, the body carries a timestamp and Feishu's
 *   signature of it (HMAC-SHA256 keyed by "timestamp\nsecret" over nothing, base64).
 */
import crypto from 'node:crypto';
import { goJson } from './escape';

export interface ServiceRequest {
  method: string;
  url: string;
  body: string;
  /** Whether Gitea's delivery headers go along. */
  giteaHeaders: boolean;
}

export function serviceRequest(type: string, hook: { url: string; httpMethod: string; secret: string }, message: unknown, now = new Date()): ServiceRequest {
  // Gitea sends chat services a POST whatever method the hook names (GET has no body to carry).
  const method = hook.httpMethod === 'GET' ? 'POST' : hook.httpMethod || 'POST';
  if (type === 'matrix') {
    const body = goJson(message);
    const txn = crypto.createHash('sha1').update(body.trim()).digest('hex');
    return { method: 'PUT', url: `${hook.url}/${txn}`, body, giteaHeaders: true };
  }
  if (type === 'feishu') {
    let signed = message;
    if (hook.secret) {
      const timestamp = Math.floor(now.getTime() / 1000);
      const sign = crypto.createHmac('sha256', `${timestamp}\n${hook.secret}`).digest('base64');
      signed = { timestamp, sign, ...(message as object) };
    }
    return { method, url: hook.url, body: goJson(signed), giteaHeaders: false };
  }
  return { method, url: hook.url, body: goJson(message), giteaHeaders: true };
}
