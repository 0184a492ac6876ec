/**
 * On-disk bare repositories through the git CLI. Pure async functions on paths: the callers
 * (repository service, git HTTP routes) own the database rows.
 */
export {
  initRepository,
  deleteRepository,
  renameRepository,
  repositoryExists,
  listRepositoryDirs,
  repositoryPath,
  isValidBranchName,
  RepositoryExistsError,
  UnknownTemplateError,
} from './repository';
export type { AutoInitOptions, InitRepositoryOptions, GitSignature, RepositoryDir } from './repository';
export { repoStats, directorySize, headBranch, listBranches, setDefaultBranch } from './stats';
export type { RepoStats } from './stats';
export { runGit, gitEnv, GitCommandError } from './run';
export { writeCommit, updateRef, deleteRef, commitMessage, NULL_OID, RefChangedError, IndexChangeError } from './commit-writer';
export type { CommitRequest, FileChange, FileMode, Signature, WrittenCommit } from './commit-writer';
export { cleanTreePath, escapeTreePath, pathEscape, TreePathError, MAX_TREE_PATH_BYTES, MAX_TREE_NAME_BYTES } from './tree-path';
