/**
 * Packagist's update-package call: a push names the package to refresh (the hook's
 * package_url); Gitea 1.27 sends every other event too, with an empty URL, and so does the forge.
 */
import type { Converter } from './types';

export const packagist: Converter = (event, _p, meta) => ({ repository: { url: event === 'push' ? (meta.package_url ?? '') : '' } });
