/**
 * Who may run which git command over SSH (Gitea's `serv` and its private ServCommand): the
 * client authenticated with a public key, either a user's key (acting as that user, with the
 * user's permissions on the code or wiki unit) or a deploy key (reaching only the repositories
 * it is granted to, read-only or read-write). A refusal carries Gitea's text for the client.
 */
import type { Prisma } from './database';
import { AccessMode } from './convert/common';
import { USER_TYPE_ORGANIZATION, type PermissionService } from './permissions';
import type { User } from './records';
import type { RepoService, RepoWithOwner } from './repos';
import type { UserService } from './users';
import type { WikiService } from './wiki';

/** The key an SSH connection proved it holds. */
export interface SshKey {
  id: number;
  name: string;
  /** 'user' keys act as their owner; 'deploy' keys as the repositories' deploy key. */
  kind: 'user' | 'deploy';
  ownerId: number;
}

/** What one git command over SSH may do and as whom. */
export interface SshGrant {
  repo: RepoWithOwner;
  /** The repository folder git runs in (the wiki's for `<repo>.wiki.git`). */
  repoPath: string;
  isWiki: boolean;
  keyId: number;
  /** The DeployKey row of a deploy key on this repository, else 0. */
  deployKeyId: number;
  /**
   * Who pushes: the key's user, or for a deploy key the repository's owner (Gitea has no user
   * for a deploy key and names the owner in hooks, feeds and webhooks).
   */
  pusher: User;
  /** May the ref updates of a push go in (checked again in pre-receive, as Gitea does). */
  canWrite: boolean;
}

export interface SshRequest {
  ownerName: string;
  /** Without `.git` and `.wiki`. */
  repoName: string;
  isWiki: boolean;
  write: boolean;
  /** receive-pack on the code (Gitea postpones the write check to pre-receive then). */
  isCodePush: boolean;
}

/** A refused command; `message` is what the client's git prints. */
export class SshRefusal extends Error {}

export class SshAccessService {
  constructor(
    private readonly prisma: Prisma,
    private readonly permissions: PermissionService,
    private readonly users: UserService,
    private readonly repos: RepoService,
    private readonly wiki: WikiService,
  ) {}

  /** The user or deploy key with this SHA256 fingerprint (`SHA256:<base64>`), or null. */
  async keyByFingerprint(fingerprint: string): Promise<SshKey | null> {
    const row = await this.prisma.publicKey.findFirst({ where: { fingerprint, kind: { in: ['user', 'deploy'] } } });
    return row ? { id: row.id, name: row.name, kind: row.kind as SshKey['kind'], ownerId: row.ownerId } : null;
  }

  /** Gitea's answer to `ssh git@host` without a command (ServNoCommand); a refusal if the account is disabled. */
  async greeting(keyId: number, appName: string): Promise<string> {
    const key = await this.prisma.publicKey.findUnique({ where: { id: keyId } });
    if (!key) throw new SshRefusal(`Cannot find key: ${keyId}`);
    let hello: string;
    if (key.kind === 'deploy') {
      hello = `Hi there! You've successfully authenticated with the deploy key named ${key.name}, but ${appName} does not provide shell access.`;
    } else {
      const user = await this.users.findById(key.ownerId);
      if (!user) throw new SshRefusal(`Cannot find owner with id: ${key.ownerId} for key: ${keyId}`);
      if (!user.isActive || user.prohibitLogin) throw new SshRefusal('Your account is disabled.');
      hello = `Hi there, ${user.name}! You've successfully authenticated with the key named ${key.name}, but ${appName} does not provide shell access.`;
    }
    return `${hello}\nIf this is unexpected, please log in with password and setup ${appName} under another user.\n`;
  }

  /** Gitea's ServCommand: the grant for this command, or an SshRefusal. */
  async authorize(keyId: number, req: SshRequest): Promise<SshGrant> {
    const modeString = req.write ? 'write to' : 'read';
    const wanted = `${req.ownerName}/${req.repoName}`;
    let owner = await this.users.findByName(req.ownerName);
    if (!owner) owner = await this.users.redirectTarget(req.ownerName);
    if (!owner) throw new SshRefusal(`Cannot find repository: ${wanted}`);
    if (owner.type !== USER_TYPE_ORGANIZATION && !owner.isActive) throw new SshRefusal('Repository cannot be accessed, you could retry it later');
    const repo = await this.repos.findByOwnerAndName(owner.name, req.repoName);
    if (!repo && !req.write) throw new SshRefusal(`Cannot find repository: ${owner.name}/${req.repoName}`);
    const fullName = repo ? `${repo.owner.name}/${repo.name}` : `${owner.name}/${req.repoName}`;
    if (repo && req.write && repo.isMirror) throw new SshRefusal(`Mirror Repository ${fullName} is read-only`);

    const key = await this.prisma.publicKey.findUnique({ where: { id: keyId } });
    if (!key || (key.kind !== 'user' && key.kind !== 'deploy')) throw new SshRefusal(`Cannot find key: ${keyId}`);
    if (!repo && key.kind === 'deploy') throw new SshRefusal(`Cannot find repository ${fullName}`);

    let user: User | null = null;
    let deployKey: { id: number; mode: number } | null = null;
    if (key.kind === 'deploy') {
      deployKey = await this.prisma.deployKey.findUnique({ where: { keyId_repoId: { keyId: key.id, repoId: repo!.id } }, select: { id: true, mode: true } });
      if (!deployKey) throw new SshRefusal(`Public (Deploy) Key: ${key.id}:${key.name} is not authorized to ${modeString} ${fullName}.`);
    } else {
      user = await this.users.findById(key.ownerId);
      if (!user) throw new SshRefusal(`Public Key: ${key.id}:${key.name} owner ${key.ownerId} does not exist.`);
      if (!user.isActive || user.prohibitLogin) throw new SshRefusal('Your account is disabled.');
    }
    if (!repo) {
      // Gitea creates a repository on a push to a missing one only when allowed (off by default); the forge never does.
      throw new SshRefusal(owner.type === USER_TYPE_ORGANIZATION ? 'Push to create is not enabled for organizations.' : 'Push to create is not enabled for users.');
    }
    if (req.write && repo.isArchived) throw new SshRefusal(`Repo: ${fullName} is archived.`);

    const unit = req.isWiki ? 'repo.wiki' : 'repo.code';
    const userMode = user ? await this.permissions.repoAccessMode(user, repo, unit) : AccessMode.None;
    const canWrite = deployKey ? deployKey.mode >= AccessMode.Write : userMode >= AccessMode.Write;
    // Gitea checks permissions for every write and for private repositories or owners; a
    // public repository is readable with any valid key.
    if (req.write || repo.isPrivate || repo.owner.visibility === 2 || user?.isRestricted) {
      if (deployKey) {
        if (deployKey.mode < (req.write ? AccessMode.Write : AccessMode.Read)) {
          throw new SshRefusal(`Deploy Key: ${key.id}:${key.name} is not authorized to ${modeString} ${fullName}.`);
        }
      } else {
        // A push to the code needs only read here: the ref updates are refused in pre-receive
        // ("User permission denied for writing."), as Gitea does since git supports proc-receive.
        const needed = req.write && !req.isCodePush ? AccessMode.Write : AccessMode.Read;
        if (userMode < needed) {
          const asked = `${req.ownerName}/${req.repoName}${req.isWiki ? '.wiki' : ''}`;
          throw new SshRefusal(`User: ${user!.id}:${user!.name} with Key: ${key.id}:${key.name} is not authorized to ${modeString} ${asked}.`);
        }
      }
    }

    let repoPath = this.repos.diskPath(repo.owner.name, repo.name);
    if (req.isWiki) {
      if (!repo.hasWiki) throw new SshRefusal('repository wiki is disabled');
      repoPath = await this.wiki.init(repo);
    }
    return { repo, repoPath, isWiki: req.isWiki, keyId: key.id, deployKeyId: deployKey?.id ?? 0, pusher: user ?? repo.owner, canWrite };
  }

  /** Gitea's UpdatePublicKeyInRepo: the key (and its deploy grant) were just used. */
  async keyUsed(keyId: number, repoId: number): Promise<void> {
    const now = new Date();
    await this.prisma.publicKey.updateMany({ where: { id: keyId }, data: { updatedAt: now } });
    await this.prisma.deployKey.updateMany({ where: { keyId, repoId }, data: { updatedAt: now } });
  }
}
