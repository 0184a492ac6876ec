/** The repository's API and web addresses under ROOT_URL, as Gitea's repo.APIURL() and HTMLURL(). */
import type { RepoWithOwner } from '../convert/repository';

export function repoApiUrl(c: { rootUrl: string }, repo: RepoWithOwner): string {
  return `${c.rootUrl}api/v1/repos/${repo.owner.name}/${repo.name}`;
}

export function repoHtmlUrl(c: { rootUrl: string }, repo: RepoWithOwner): string {
  return `${c.rootUrl}${repo.owner.name}/${repo.name}`;
}
