/** What conversions need of the configuration: the root URL and its parts. */
import type { ForgeConfig } from '../../config';

export interface ConvertContext {
  rootUrl: string;
  /** Host of ROOT_URL. */
  host: string;
  /** Domain of placeholder e-mails (the config's noReplyAddress). */
  noReplyAddress: string;
  /** Path of ROOT_URL ("/" or "/sub/"), for Gitea's relative `link` fields. */
  basePath: string;
  /** Where clone URLs send SSH clients; null when the forge serves no SSH (ssh_url is then empty). */
  ssh: { user: string; domain: string; port: number } | null;
}

export type ConvertConfig = Pick<ForgeConfig, 'rootUrl'> & Partial<Pick<ForgeConfig, 'startSshServer' | 'sshUser' | 'sshDomain' | 'sshPort' | 'noReplyAddress'>>;

export function convertContext(config: ConvertConfig): ConvertContext {
  const url = new URL(config.rootUrl);
  return {
    rootUrl: config.rootUrl,
    host: url.hostname,
    noReplyAddress: config.noReplyAddress ?? `noreply.${url.hostname}`,
    basePath: url.pathname.endsWith('/') ? url.pathname : `${url.pathname}/`,
    ssh: config.startSshServer ? { user: config.sshUser ?? 'git', domain: config.sshDomain ?? url.hostname, port: config.sshPort ?? 22 } : null,
  };
}
