/** Gitea's git data records: references, commits, trees, blobs, annotated tags, notes, statuses. */
import { bool, int, nullable, obj, str } from './common';

const nullStr = { type: ['string', 'null'] };

const GitObject = obj({ type: str, sha: str, url: str });
export const ReferenceSchema = obj({ ref: str, url: str, object: GitObject }, [], { $id: 'Reference' });

const CommitUser = obj({ name: str, email: str, date: str });
const CommitMeta = obj({ url: str, sha: str, created: str });
export const PayloadCommitVerificationSchema = obj(
  { verified: bool, reason: str, signature: str, signer: nullable(obj({ name: str, email: str, username: str })), payload: str },
  [],
  { $id: 'PayloadCommitVerification' },
);

export const CommitSchema = obj(
  {
    url: str,
    sha: str,
    created: str,
    html_url: str,
    commit: obj({
      url: str,
      author: CommitUser,
      committer: CommitUser,
      message: str,
      tree: CommitMeta,
      verification: nullable({ $ref: 'PayloadCommitVerification#' }),
    }),
    author: nullable({ $ref: 'User#' }),
    committer: nullable({ $ref: 'User#' }),
    parents: { type: 'array', items: CommitMeta },
    files: nullable({ type: 'array', items: obj({ filename: str, status: str }) }),
    stats: nullable(obj({ total: int, additions: int, deletions: int })),
  },
  [],
  { $id: 'Commit' },
);

export const GitTreeResponseSchema = obj(
  {
    sha: str,
    url: str,
    tree: nullable({ type: 'array', items: obj({ path: str, mode: str, type: str, size: int, sha: str, url: str }) }),
    truncated: bool,
    page: int,
    total_count: int,
  },
  [],
  { $id: 'GitTreeResponse' },
);

export const GitBlobResponseSchema = obj(
  { content: nullStr, encoding: nullStr, url: str, sha: str, size: int, lfs_oid: str, lfs_size: int },
  [],
  { $id: 'GitBlobResponse' },
);

export const AnnotatedTagSchema = obj(
  {
    tag: str,
    sha: str,
    url: str,
    message: str,
    tagger: nullable(CommitUser),
    object: obj({ type: str, url: str, sha: str }),
    verification: nullable({ $ref: 'PayloadCommitVerification#' }),
  },
  [],
  { $id: 'AnnotatedTag' },
);

export const NoteSchema = obj({ message: str, commit: { $ref: 'Commit#' } }, [], { $id: 'Note' });

export const CompareSchema = obj({ total_commits: int, commits: { type: 'array', items: { $ref: 'Commit#' } } }, [], { $id: 'Compare' });

export const CommitStatusSchema = obj(
  {
    id: int,
    status: str,
    target_url: str,
    description: str,
    url: str,
    context: str,
    creator: nullable({ $ref: 'User#' }),
    created_at: str,
    updated_at: str,
  },
  [],
  { $id: 'CommitStatus' },
);

export const CombinedStatusSchema = obj(
  {
    state: str,
    sha: str,
    total_count: int,
    statuses: nullable({ type: 'array', items: { $ref: 'CommitStatus#' } }),
    repository: nullable({ $ref: 'Repository#' }),
    commit_url: str,
    url: str,
  },
  [],
  { $id: 'CombinedStatus' },
);

export const GIT_DATA_SCHEMAS = [
  ReferenceSchema,
  PayloadCommitVerificationSchema,
  CommitSchema,
  GitTreeResponseSchema,
  GitBlobResponseSchema,
  AnnotatedTagSchema,
  NoteSchema,
  CompareSchema,
  CommitStatusSchema,
  CombinedStatusSchema,
];
