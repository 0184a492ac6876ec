/**
 * The hook types whose receivers need their own message format, each one converter. A type not
 * listed here (and not gitea/gogs, which take the forge's payload as it is) is stored and listed
 * but sent nothing, because its receiver could not read the forge's payload.
 */
import { dingtalk } from './dingtalk';
import { discord } from './discord';
import { feishu } from './feishu';
import { matrix } from './matrix';
import { msteams } from './msteams';
import { packagist } from './packagist';
import { slack } from './slack';
import { telegram } from './telegram';
import type { Converter } from './types';
import { wechatwork } from './wechatwork';

export const CONVERTERS: Record<string, Converter> = { slack, discord, msteams, dingtalk, telegram, feishu, wechatwork, matrix, packagist };

/**
 * Whether a hook of `type` is sent this event at all. Chat services get no push without commits
 * (a new branch or tag also makes one): "0 new commits" tells a channel nothing, and Gitea sends
 * those only to gitea and gogs hooks.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the webhook JSON, read by field.
export function receivesEvent(type: string, eventType: string, payload: any): boolean {
  if (!CONVERTERS[type]) return true;
  return !(eventType === 'push' && !payload?.commits?.length);
}
export type { Converter, HookMeta } from './types';
export { serviceRequest } from './request';
