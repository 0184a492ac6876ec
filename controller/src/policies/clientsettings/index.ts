/**
 * ClientSettingsPolicy: body.maxSize as client_max_body_size, the route's over its Gateway's.
 * nginx checks it where it picks a location by URI, so a dispatched rule checks a declared
 * Content-Length itself (bodysize.ts, model/bodylimit.ts).
 */
import type { ClientSettingsPolicy } from '../../resources/policies';
import type { PolicyKindModule } from '../kind';
import type { Attachment } from '../targets';
import { httpOnly } from '../unsupported';

export { contentLengthAbove } from './bodysize';

export interface BodyLevel {
  maxSize: string;
  source: Attachment;
}

export const clientSettingsPolicies: PolicyKindModule<BodyLevel> = {
  kind: 'ClientSettingsPolicy',
  unsupported: httpOnly('ClientSettingsPolicy'),

  exclusiveFields(policy) {
    return (policy as ClientSettingsPolicy).spec.body?.maxSize !== undefined ? ['body.maxSize'] : [];
  },

  level(applied) {
    const source = applied.find((a) => (a.policy as ClientSettingsPolicy).spec.body?.maxSize !== undefined);
    return source ? { maxSize: (source.policy as ClientSettingsPolicy).spec.body!.maxSize!, source } : undefined;
  },

  merge(place, out) {
    const body = place.route?.maxSize ?? place.gateway?.maxSize;
    if (body !== undefined) out.clientMaxBodySize = body;
  },

  generate(settings, out) {
    if (settings.clientMaxBodySize !== undefined) out.clientMaxBodySize = settings.clientMaxBodySize;
  },
};
