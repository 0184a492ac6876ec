/**
 * A repository generated from a template repository (POST /repos/{owner}/{repo}/generate,
 * Gitea's GenerateRepository): a new repository made the usual way (RepoService.create),
 * then, per option, the template's git content as ONE fresh commit "Initial commit" (no
 * history, as Gitea's shallow clone + re-init does), its labels, webhooks and avatar.
 *
 * Git content: the files of the template's default branch; when it has `.gitea/template`, the
 * files its globs match get Gitea's variables expanded ($REPO_NAME, ${REPO_OWNER_SNAKE}, ...)
 * in content and path, and `.gitea/template` itself is left out. The blobs are copied with one
 * pack-objects | unpack-objects pair and the commit is written with the plumbing commit writer
 * (no clone, no working tree). Submodule entries are left out (the writer cannot write them).
 */
import execa from 'execa';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Prisma } from './database';
import { InvalidError, NotFoundError, PermissionDeniedError } from './errors';
import { parseLsTree, type LsTreeEntry } from './git/ls-tree';
import { gitEnv, runGit } from './git/run';
import { writeCommit, type FileChange } from './git/commit-writer';
import { compileGlob, type Glob } from './glob';
import { USER_TYPE_ORGANIZATION, type PermissionService } from './permissions';
import type { RepoService, RepoWithOwner } from './repos';
import type { User } from './records';
import type { ForgeConfig } from '../config';

export interface GenerateInput {
  owner?: string;
  name: string;
  default_branch?: string;
  description?: string;
  private?: boolean;
  git_content?: boolean;
  topics?: boolean;
  git_hooks?: boolean;
  webhooks?: boolean;
  avatar?: boolean;
  labels?: boolean;
  protected_branch?: boolean;
}

/** A template owner that does not exist: Gitea answers 404 with `{"error": ...}`, not its usual body. */
export class GenerateOwnerMissingError extends NotFoundError {}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

function words(s: string): string[] {
  return s
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
}

/** Gitea's expansion transformers (xstrings-like case conversions). */
const TRANSFORMERS: Record<string, (s: string) => string> = {
  SNAKE: (s) => words(s).map((w) => w.toLowerCase()).join('_'),
  KEBAB: (s) => words(s).map((w) => w.toLowerCase()).join('-'),
  CAMEL: (s) => words(s).map((w, i) => (i === 0 ? w.toLowerCase() : w[0].toUpperCase() + w.slice(1).toLowerCase())).join(''),
  PASCAL: (s) => words(s).map((w) => w[0].toUpperCase() + w.slice(1).toLowerCase()).join(''),
  LOWER: (s) => s.toLowerCase(),
  UPPER: (s) => s.toUpperCase(),
  TITLE: (s) => s.replace(/\b\w/g, (c) => c.toUpperCase()),
};

export function expansionVars(now: Date, values: Record<string, string>, transformed: string[]): Map<string, string> {
  const vars = new Map<string, string>();
  const month = MONTHS[now.getUTCMonth()];
  const base: Record<string, string> = {
    YEAR: String(now.getUTCFullYear()),
    MONTH: String(now.getUTCMonth() + 1).padStart(2, '0'),
    MONTH_ENGLISH: month,
    DAY: String(now.getUTCDate()).padStart(2, '0'),
    ...values,
  };
  for (const [k, v] of Object.entries(base)) {
    vars.set(k, v);
    if (transformed.includes(k) || k === 'MONTH_ENGLISH') for (const [t, fn] of Object.entries(TRANSFORMERS)) vars.set(`${k}_${t}`, fn(v));
  }
  return vars;
}

/** Go's os.Expand: $NAME and ${NAME}; an unknown name expands to itself (Gitea's mapping). */
export function expand(src: string, vars: Map<string, string>): string {
  return src.replace(/\$(?:\{([^}]*)\}|([A-Za-z0-9_]+))/g, (_m, braced: string | undefined, bare: string | undefined) => {
    const key = braced ?? bare ?? '';
    return vars.get(key) ?? key;
  });
}

/** Gitea's filePathSanitize for an expanded path. */
export function sanitizePath(p: string): string {
  return p
    .split('/')
    .map((field) => {
      let f = field.replace(/[<>:"\\|?*\x00-\x1f]/g, '_').replace(/^(con|prn|aux|nul|com\d|lpt\d)$/i, '_').trim();
      if (f.startsWith('..')) f = `__${f.slice(2)}`;
      if (f.toLowerCase() === '.git') f = `_${f.slice(1)}`;
      return f || '_';
    })
    .join('/');
}

async function listFiles(repoPath: string, rev: string): Promise<LsTreeEntry[]> {
  return parseLsTree(await runGit(['--git-dir', repoPath, 'ls-tree', '-r', '-z', '--full-tree', rev, '--']));
}

async function copyObjects(from: string, to: string, oids: string[]): Promise<void> {
  if (!oids.length) return;
  const pack = execa('git', ['--git-dir', from, 'pack-objects', '--stdout', '-q'], { env: gitEnv(), extendEnv: false, input: `${[...new Set(oids)].join('\n')}\n`, encoding: null, maxBuffer: 1024 * 1024 * 1024 });
  const { stdout } = await pack;
  await execa('git', ['--git-dir', to, 'unpack-objects', '-q'], { env: gitEnv(), extendEnv: false, input: stdout as unknown as Buffer });
}

export class TemplateGenerateService {
  constructor(
    private readonly prisma: Prisma,
    private readonly config: ForgeConfig,
    private readonly permissions: PermissionService,
    private readonly repos: RepoService,
  ) {}

  /** Who the new repository belongs to (Gitea's checks, in its order). */
  async owner(doer: User, name: string | undefined): Promise<User> {
    if (name === doer.name) return doer;
    const owner = await this.prisma.user.findFirst({ where: { lowerName: (name ?? '').toLowerCase() } });
    if (!owner || !name) throw new GenerateOwnerMissingError(`request owner \`${name ?? ''}\` does not exist`);
    if (!doer.isAdmin && owner.type !== USER_TYPE_ORGANIZATION) throw new PermissionDeniedError('Only admin can generate repository for other user.');
    if (!doer.isAdmin && !(await this.permissions.canCreateOrgRepo(doer.id, owner.id))) {
      throw new PermissionDeniedError('Given user is not allowed to create repository in organization.');
    }
    return owner;
  }

  async generate(doer: User, template: RepoWithOwner, o: GenerateInput): Promise<RepoWithOwner> {
    if (!template.isTemplate) throw new InvalidError('this is not a template repo');
    if (!(o.git_content || o.topics || o.git_hooks || o.webhooks || o.avatar || o.labels || o.protected_branch)) {
      throw new InvalidError('must select at least one template item');
    }
    const owner = await this.owner(doer, o.owner);
    const defaultBranch = o.default_branch || template.defaultBranch || this.config.defaultBranch;
    let repo = await this.repos.create(doer, owner, { name: o.name, description: o.description ?? '', private: o.private ?? false, default_branch: defaultBranch, trust_model: template.trustModel });
    try {
      await this.prisma.repository.update({ where: { id: repo.id }, data: { templateId: template.id, objectFormatName: template.objectFormatName } });
      if (o.git_content && !template.isEmpty) {
        await this.copyContent(doer, template, repo, defaultBranch);
        repo = await this.repos.refsChanged(doer, repo.id);
      }
      if (o.labels) await this.copyLabels(template.id, repo.id);
      if (o.webhooks) await this.copyWebhooks(template.id, repo.id);
      if (o.avatar && template.avatar) await this.copyAvatar(template, repo);
    } catch (err) {
      await this.repos.delete(doer, repo, 4).catch(() => undefined);
      throw err;
    }
    return this.prisma.repository.findUniqueOrThrow({ where: { id: repo.id }, include: { owner: true } });
  }

  private async copyContent(doer: User, template: RepoWithOwner, repo: RepoWithOwner, branch: string): Promise<void> {
    const from = this.repos.diskPath(template.owner.name, template.name);
    const to = this.repos.diskPath(repo.owner.name, repo.name);
    const files = (await listFiles(from, `refs/heads/${template.defaultBranch}`)).filter((f) => f.type === 'blob');
    const marker = files.find((f) => f.path === '.gitea/template' && f.mode !== '120000');
    let matchers: Glob[] = [];
    if (marker) {
      const text = await runGit(['--git-dir', from, 'cat-file', 'blob', marker.oid]);
      matchers = text
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l && !l.startsWith('#'))
        .flatMap((l) => {
          try {
            return [compileGlob(l)];
          } catch {
            return []; // an invalid line is skipped, as Gitea does
          }
        });
    }
    const vars = expansionVars(new Date(), {
      REPO_NAME: repo.name,
      TEMPLATE_NAME: template.name,
      REPO_DESCRIPTION: repo.description,
      TEMPLATE_DESCRIPTION: template.description,
      REPO_OWNER: repo.owner.name,
      TEMPLATE_OWNER: template.owner.name,
      REPO_LINK: `${new URL(this.config.rootUrl).pathname.replace(/\/$/, '')}/${repo.owner.name}/${repo.name}`,
      TEMPLATE_LINK: `${new URL(this.config.rootUrl).pathname.replace(/\/$/, '')}/${template.owner.name}/${template.name}`,
      REPO_HTTPS_URL: `${this.config.rootUrl}${repo.owner.name}/${repo.name}.git`,
      TEMPLATE_HTTPS_URL: `${this.config.rootUrl}${template.owner.name}/${template.name}.git`,
      REPO_SSH_URL: '',
      TEMPLATE_SSH_URL: '',
    }, ['REPO_NAME', 'TEMPLATE_NAME', 'REPO_OWNER', 'TEMPLATE_OWNER']);
    const kept = files.filter((f) => f !== marker);
    const expanded = kept.filter((f) => f.mode !== '120000' && matchers.some((m) => m.match(f.path)));
    await copyObjects(from, to, kept.filter((f) => !expanded.includes(f)).map((f) => f.oid));
    const changes: FileChange[] = [];
    for (const f of kept) {
      const mode = f.mode as '100644' | '100755' | '120000';
      if (expanded.includes(f)) {
        const content = await runGit(['--git-dir', from, 'cat-file', 'blob', f.oid]);
        changes.push({ kind: 'write', path: sanitizePath(expand(f.path, vars)), content: Buffer.from(expand(content, vars)), mode });
      } else changes.push({ kind: 'write', path: f.path, oid: f.oid, mode });
    }
    const who = { name: repo.owner.fullName || repo.owner.name, email: repo.owner.email || `${repo.owner.lowerName}@noreply.localhost` };
    await writeCommit({ repoPath: to, ref: `refs/heads/${branch}`, base: null, changes, message: 'Initial commit', author: who, committer: who });
    await runGit(['--git-dir', to, 'symbolic-ref', 'HEAD', `refs/heads/${branch}`]);
    void doer;
  }

  private async copyLabels(fromId: number, toId: number): Promise<void> {
    const labels = await this.prisma.label.findMany({ where: { repoId: fromId }, orderBy: { id: 'asc' } });
    for (const l of labels) {
      await this.prisma.label.create({ data: { repoId: toId, name: l.name, color: l.color, description: l.description, exclusive: l.exclusive, archivedAt: l.archivedAt } });
    }
  }

  private async copyWebhooks(fromId: number, toId: number): Promise<void> {
    const hooks = await this.prisma.webhook.findMany({ where: { repoId: fromId }, orderBy: { id: 'asc' } });
    for (const { id: _id, repoId: _r, ownerId: _o, lastStatus: _s, createdAt: _c, updatedAt: _u, ...h } of hooks) {
      await this.prisma.webhook.create({ data: { ...h, repoId: toId } });
    }
  }

  private async copyAvatar(template: RepoWithOwner, repo: RepoWithOwner): Promise<void> {
    const dir = path.join(this.config.dataDir, 'repo-avatars');
    const name = `${repo.id}-${template.avatar.split('-').slice(1).join('-')}`;
    await fs.copyFile(path.join(dir, template.avatar), path.join(dir, name));
    await this.prisma.repository.update({ where: { id: repo.id }, data: { avatar: name } });
  }
}
