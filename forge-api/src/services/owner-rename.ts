/**
 * Renaming a user or organization (admin rename, POST /orgs/{org}/rename): the row and its
 * redirect (UserService.rename), then the owner's directory of repositories on disk, whose
 * path is the lower-case name.
 */
import path from 'node:path';
import * as git from './git';
import type { User } from './records';
import type { UserService } from './users';

export class OwnerRenameService {
  constructor(
    private readonly users: UserService,
    private readonly reposDir: string,
  ) {}

  async rename(owner: User, newName: string): Promise<void> {
    await this.users.rename(owner, newName);
    if (newName.toLowerCase() === owner.lowerName) return;
    const from = path.join(this.reposDir, owner.lowerName);
    const to = path.join(this.reposDir, newName.toLowerCase());
    // An owner without repositories has no directory.
    await git.renameRepository(from, to).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  }
}
