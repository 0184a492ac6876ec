/**
 * Gitea's built-in OAuth2 applications: public clients with fixed client ids that tools ship
 * with (tea, git-credential-oauth, Git Credential Manager, the Gitea mobile app), so that they
 * work against any instance without registering. Which ones exist is the site's choice, as
 * Gitea's `[oauth2] DEFAULT_APPLICATIONS` (all by default; empty = none).
 */
export interface BuiltinApplication {
  /** The name used in DEFAULT_APPLICATIONS. */
  configName: string;
  displayName: string;
  clientId: string;
  redirectUris: string[];
}

const LOOPBACK = ['http://127.0.0.1', 'https://127.0.0.1'];

export const BUILTIN_APPLICATIONS: readonly BuiltinApplication[] = [
  { configName: 'git-credential-oauth', displayName: 'git-credential-oauth', clientId: 'a4792ccc-144e-407e-86c9-5e7d8d9c3269', redirectUris: LOOPBACK },
  { configName: 'git-credential-manager', displayName: 'Git Credential Manager', clientId: 'e90ee53c-94e2-48ac-9358-a874fb9e0662', redirectUris: LOOPBACK },
  { configName: 'tea', displayName: 'tea', clientId: 'd57cb8c4-630c-4168-8324-ec79935e18d4', redirectUris: LOOPBACK },
  { configName: 'gitea-app', displayName: 'Gitea App', clientId: 'b757811a-05c8-4c76-8d74-a5ee3d2073f2', redirectUris: ['com.gitea.app://oauth/callback'] },
];

export const DEFAULT_APPLICATION_NAMES = BUILTIN_APPLICATIONS.map((a) => a.configName);

/** The enabled built-ins from DEFAULT_APPLICATIONS' names; an unknown name is a configuration error, as in Gitea. */
export function enabledBuiltins(names: readonly string[]): BuiltinApplication[] {
  return names.map((name) => {
    const app = BUILTIN_APPLICATIONS.find((a) => a.configName === name);
    if (!app) throw new Error(`unknown oauth2 application: "${name}"`);
    return app;
  });
}
