/**
 * A user's own settings (GET/PATCH /user/settings, Gitea's structs.UserSettings): profile
 * fields, theme, diff view style and the two privacy switches (hide_email keeps the e-mail
 * out of other viewers' user records, hide_activity the feeds and heatmap).
 */
import type { Prisma } from './database';
import { ValidationError } from './errors';
import type { User } from './records';
import { emitUserChanged } from './events';

/** Gitea's [ui] DEFAULT_THEME, what a user who never chose one has. */
export const DEFAULT_THEME = 'gitea-auto';

export interface UserSettingsInput {
  full_name?: string;
  website?: string;
  description?: string;
  location?: string;
  language?: string;
  theme?: string;
  diff_view_style?: string;
  hide_email?: boolean;
  hide_activity?: boolean;
}

/** structs.UserSettings */
export function toUserSettings(u: User) {
  return {
    full_name: u.fullName,
    website: u.website,
    description: u.description,
    location: u.location,
    language: u.language,
    theme: u.theme || DEFAULT_THEME,
    diff_view_style: u.diffViewStyle,
    hide_email: u.keepEmailPrivate,
    hide_activity: u.keepActivityPrivate,
  };
}

/** Gitea's binding limits of UserSettingsOptions, with its message form. */
const MAX_SIZES: [keyof UserSettingsInput, string, number][] = [
  ['full_name', 'FullName', 100],
  ['website', 'Website', 255],
  ['description', 'Description', 255],
  ['location', 'Location', 50],
];

export class UserSettingsService {
  constructor(private readonly prisma: Prisma) {}

  async update(user: User, input: UserSettingsInput): Promise<User> {
    for (const [key, field, max] of MAX_SIZES) {
      const v = input[key];
      if (typeof v === 'string' && [...v].length > max) throw new ValidationError(`[${field}]: MaxSize`);
    }
    if (input.website) {
      let ok = false;
      try {
        ok = ['http:', 'https:'].includes(new URL(input.website).protocol);
      } catch {
        ok = false;
      }
      if (!ok) throw new ValidationError('[Website]: ValidUrl');
    }
    const data: Record<string, unknown> = {};
    if (input.full_name !== undefined) data.fullName = input.full_name;
    if (input.website !== undefined) data.website = input.website;
    if (input.description !== undefined) data.description = input.description;
    if (input.location !== undefined) data.location = input.location;
    if (input.language !== undefined) data.language = input.language;
    if (input.theme !== undefined) data.theme = input.theme;
    if (input.diff_view_style !== undefined) data.diffViewStyle = input.diff_view_style;
    if (input.hide_email !== undefined) data.keepEmailPrivate = input.hide_email;
    if (input.hide_activity !== undefined) data.keepActivityPrivate = input.hide_activity;
    if (!Object.keys(data).length) return user;
    const updated = await this.prisma.user.update({ where: { id: user.id }, data });
    // Cached doers (the auth plugin's) see the change at once.
    emitUserChanged(this.prisma, user.id);
    return updated;
  }
}
