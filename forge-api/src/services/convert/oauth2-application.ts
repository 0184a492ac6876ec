/** structs.OAuth2Application: the secret only when it was just generated, else "". */
import type { OAuth2ApplicationRow } from '../oauth2/applications';
import { fmtTime } from './common';

export function toOAuth2Application(app: OAuth2ApplicationRow, clientSecret = '') {
  return {
    id: app.id,
    name: app.name,
    client_id: app.clientId,
    client_secret: clientSecret,
    confidential_client: app.confidentialClient,
    skip_secondary_authorization: app.skipSecondaryAuthorization,
    redirect_uris: JSON.parse(app.redirectUris) as string[],
    created: fmtTime(app.createdAt),
  };
}
