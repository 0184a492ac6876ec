/** What conversions need of the configuration: the root URL and its parts. */
import type { ForgeConfig } from '../../config';

export interface ConvertContext {
  rootUrl: string;
  /** Host of ROOT_URL, for placeholder e-mails. */
  host: string;
  /** Path of ROOT_URL ("/" or "/sub/"), for Gitea's relative `link` fields. */
  basePath: string;
}

export function convertContext(config: Pick<ForgeConfig, 'rootUrl'>): ConvertContext {
  const url = new URL(config.rootUrl);
  return { rootUrl: config.rootUrl, host: url.hostname, basePath: url.pathname.endsWith('/') ? url.pathname : `${url.pathname}/` };
}
