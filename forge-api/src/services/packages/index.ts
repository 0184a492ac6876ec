/**
 * Packages (Gitea's packages module, the generic registry): a package per owner/type/name,
 * versions, files. File bytes are stored once per content under <packagesDir>/ab/cd/<sha256>
 * (Gitea's content-addressed blob store), streamed to disk while hashing.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform, type Readable } from 'node:stream';
import type { ForgeConfig } from '../../config';
import { AlreadyExistsError, InvalidError, NotFoundError, PermissionDeniedError } from '../errors';
import { AccessMode, type Converter, fmtTime } from '../convert';
import type { Prisma } from '../database';
import { USER_TYPE_ORGANIZATION, type PermissionService } from '../permissions';
import type { User } from '../records';

/** Gitea's package types (the spec's list). */
export const PACKAGE_TYPES = [
  'alpine', 'cargo', 'chef', 'composer', 'conan', 'conda', 'container', 'cran', 'debian', 'generic', 'go', 'helm',
  'maven', 'npm', 'nuget', 'pub', 'pypi', 'rpm', 'rubygems', 'swift', 'vagrant',
];

/** Generic registry rules (routers/api/packages/generic). */
const NAME_RE = /^[-_+.\w]+$/;
const FILENAME_RE = /^[-_+=:;.()[\]{}~!@#$%^& \w]+$/;

type VersionRow = NonNullable<Awaited<ReturnType<Prisma['packageVersion']['findFirst']>>>;
type PackageRow = NonNullable<Awaited<ReturnType<Prisma['package']['findFirst']>>>;

export class PackageService {
  constructor(
    private readonly prisma: Prisma,
    private readonly config: ForgeConfig,
    private readonly permissions: PermissionService,
    private readonly convert: Converter,
  ) {}

  /**
   * Access to an owner's packages (Gitea's PackageAssignment): owner/admin write; org members
   * with write (or owner) team access write; anyone who may see the owner reads.
   */
  async accessMode(doer: User | null, owner: User): Promise<number> {
    if (doer?.isAdmin || (doer && doer.id === owner.id)) return AccessMode.Owner;
    let mode: number = AccessMode.None;
    if (doer && owner.type === USER_TYPE_ORGANIZATION) {
      mode = Math.min(await this.permissions.orgAuthorizeLevel(doer.id, owner.id), AccessMode.Admin);
    }
    if (mode < AccessMode.Read && (await this.permissions.canSeeOwner(doer, owner))) mode = AccessMode.Read;
    return mode;
  }

  blobPath(sha256: string): string {
    return path.join(this.config.packagesDir, sha256.slice(0, 2), sha256.slice(2, 4), sha256);
  }

  /** Stores a stream; returns its size and hashes (the blob is shared by equal contents). */
  async storeBlob(body: Readable): Promise<{ size: number; md5: string; sha1: string; sha256: string; sha512: string }> {
    const tmpDir = path.join(this.config.packagesDir, 'tmp');
    await fsp.mkdir(tmpDir, { recursive: true });
    const tmp = path.join(tmpDir, crypto.randomUUID());
    const hashes = { md5: crypto.createHash('md5'), sha1: crypto.createHash('sha1'), sha256: crypto.createHash('sha256'), sha512: crypto.createHash('sha512') };
    let size = 0;
    const tap = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        size += chunk.length;
        for (const h of Object.values(hashes)) h.update(chunk);
        cb(null, chunk);
      },
    });
    try {
      await pipeline(body, tap, fs.createWriteStream(tmp));
      const digest = { md5: hashes.md5.digest('hex'), sha1: hashes.sha1.digest('hex'), sha256: hashes.sha256.digest('hex'), sha512: hashes.sha512.digest('hex') };
      const target = this.blobPath(digest.sha256);
      await fsp.mkdir(path.dirname(target), { recursive: true });
      await fsp.rename(tmp, target);
      return { size, ...digest };
    } finally {
      await fsp.rm(tmp, { force: true });
    }
  }

  /** PUT /api/packages/{owner}/generic/{name}/{version}/{file}: 409 when the file exists. */
  async uploadGeneric(owner: User, creator: User, name: string, version: string, filename: string, body: Readable) {
    if (!NAME_RE.test(name)) throw new InvalidError('invalid package name');
    if (!version || version !== version.trim() || /[/\\]/.test(version)) throw new InvalidError('invalid package version');
    if (!FILENAME_RE.test(filename) || filename !== filename.trim()) throw new InvalidError('invalid filename');
    const blob = await this.storeBlob(body);
    const pkg =
      (await this.prisma.package.findUnique({ where: { ownerId_type_lowerName: { ownerId: owner.id, type: 'generic', lowerName: name.toLowerCase() } } })) ??
      (await this.prisma.package
        .create({ data: { ownerId: owner.id, type: 'generic', name, lowerName: name.toLowerCase() } })
        .catch(() => this.prisma.package.findUniqueOrThrow({ where: { ownerId_type_lowerName: { ownerId: owner.id, type: 'generic', lowerName: name.toLowerCase() } } })));
    const ver =
      (await this.prisma.packageVersion.findUnique({ where: { packageId_lowerVersion: { packageId: pkg.id, lowerVersion: version.toLowerCase() } } })) ??
      (await this.prisma.packageVersion
        .create({ data: { packageId: pkg.id, creatorId: creator.id, version, lowerVersion: version.toLowerCase() } })
        .catch(() => this.prisma.packageVersion.findUniqueOrThrow({ where: { packageId_lowerVersion: { packageId: pkg.id, lowerVersion: version.toLowerCase() } } })));
    try {
      await this.prisma.packageFile.create({
        data: {
          versionId: ver.id,
          name: filename,
          lowerName: filename.toLowerCase(),
          size: BigInt(blob.size),
          hashMd5: blob.md5,
          hashSha1: blob.sha1,
          hashSha256: blob.sha256,
          hashSha512: blob.sha512,
        },
      });
    } catch {
      throw new AlreadyExistsError('package file already exists');
    }
  }

  async findVersion(owner: User, type: string, name: string, version: string) {
    return this.prisma.packageVersion.findFirst({
      where: { lowerVersion: version.toLowerCase(), package: { ownerId: owner.id, type, lowerName: name.toLowerCase() } },
      include: { package: true, files: true },
    });
  }

  /** A file of a generic package for download; counts the download. */
  async openGenericFile(owner: User, name: string, version: string, filename: string) {
    const ver = await this.findVersion(owner, 'generic', name, version);
    if (!ver) throw new NotFoundError('package does not exist');
    const file = ver.files.find((f) => f.lowerName === filename.toLowerCase());
    if (!file) throw new NotFoundError('package file does not exist');
    await this.prisma.packageVersion.update({ where: { id: ver.id }, data: { downloadCount: { increment: 1 } } });
    return { file, path: this.blobPath(file.hashSha256) };
  }

  /** Deletes a version (and its package when it was the last one). */
  async deleteVersion(ver: VersionRow & { package: PackageRow }): Promise<void> {
    await this.prisma.packageVersion.delete({ where: { id: ver.id } });
    if ((await this.prisma.packageVersion.count({ where: { packageId: ver.packageId } })) === 0) {
      await this.prisma.package.delete({ where: { id: ver.packageId } }).catch(() => undefined);
    }
  }

  async deleteGenericFile(owner: User, name: string, version: string, filename: string): Promise<void> {
    const ver = await this.findVersion(owner, 'generic', name, version);
    if (!ver) throw new NotFoundError('package does not exist');
    const file = ver.files.find((f) => f.lowerName === filename.toLowerCase());
    if (!file) throw new NotFoundError('package file does not exist');
    await this.prisma.packageFile.delete({ where: { id: file.id } });
    if (ver.files.length === 1) await this.deleteVersion(ver);
  }

  /** GET /packages/{owner}?type&q: versions, newest first (Gitea's SearchVersions). */
  async list(owner: User, o: { type?: string; q?: string; skip: number; take: number }) {
    const pkgWhere: Record<string, unknown> = { ownerId: owner.id };
    if (o.type) pkgWhere.type = o.type;
    if (o.q) pkgWhere.lowerName = { contains: o.q.toLowerCase() };
    const where = { package: pkgWhere };
    const [rows, total] = await Promise.all([
      this.prisma.packageVersion.findMany({ where, include: { package: true }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], skip: o.skip, take: o.take }),
      this.prisma.packageVersion.count({ where }),
    ]);
    return { rows, total };
  }

  async findPackage(owner: User, type: string, name: string): Promise<PackageRow | null> {
    return this.prisma.package.findFirst({ where: { ownerId: owner.id, type, lowerName: name.toLowerCase() } });
  }

  /** Deletes a package with every version (Gitea's RemovePackage; blobs go with the cleanup task). */
  async deletePackage(pkg: PackageRow): Promise<void> {
    await this.prisma.package.delete({ where: { id: pkg.id } });
  }

  /** The versions of one package, newest first (GET /packages/{owner}/{type}/{name}). */
  async listVersions(pkg: PackageRow, o: { skip: number; take: number }) {
    const where = { packageId: pkg.id };
    const [rows, total] = await Promise.all([
      this.prisma.packageVersion.findMany({ where, include: { package: true }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], skip: o.skip, take: o.take }),
      this.prisma.packageVersion.count({ where }),
    ]);
    return { rows, total };
  }

  /** The newest version of a package (Gitea's SearchLatestVersions: by creation time). */
  async latestVersion(pkg: PackageRow) {
    return this.prisma.packageVersion.findFirst({ where: { packageId: pkg.id }, include: { package: true }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
  }

  /**
   * Links a package to a repository of the same owner (Gitea's LinkToRepository): an already
   * linked package is refused (Invalid), and the doer needs write access to the repository's
   * packages unit.
   */
  async link(pkg: PackageRow, repo: { id: number; ownerId: number }, doer: User): Promise<void> {
    if (pkg.ownerId !== repo.ownerId) throw new PermissionDeniedError('permission denied');
    if (pkg.repoId) throw new InvalidError('invalid argument');
    if (!(await this.canWritePackages(doer, repo.id))) throw new PermissionDeniedError('permission denied');
    await this.prisma.package.update({ where: { id: pkg.id }, data: { repoId: repo.id } });
  }

  /**
   * Unlinks a package (Gitea's UnlinkFromRepository): write access to the linked repository's
   * packages, and the owner itself, an org owner or a site admin.
   */
  async unlink(pkg: PackageRow, owner: User, doer: User): Promise<void> {
    if (!pkg.repoId) throw new InvalidError('invalid argument');
    if (!(await this.canWritePackages(doer, pkg.repoId))) throw new PermissionDeniedError('permission denied');
    if (!doer.isAdmin) {
      const allowed = owner.type === USER_TYPE_ORGANIZATION ? (await this.permissions.orgAuthorizeLevel(doer.id, owner.id)) >= AccessMode.Owner : doer.id === owner.id;
      if (!allowed) throw new PermissionDeniedError(`no permission to unlink package '${pkg.name}' from its repository, or packages are disabled`);
    }
    await this.prisma.package.update({ where: { id: pkg.id }, data: { repoId: null } });
  }

  /** Write access to a repository's packages unit (true when the repository is gone). */
  private async canWritePackages(doer: User, repoId: number): Promise<boolean> {
    const repo = await this.prisma.repository.findUnique({ where: { id: repoId }, include: { owner: true } });
    return !repo || (await this.permissions.repoAccessMode(doer, repo, 'repo.packages')) >= AccessMode.Write;
  }

  /**
   * structs.Package for version rows, in one set of queries: creators and linked repositories
   * are read together; a linked repository shows only to viewers who may read it.
   */
  async toJsonMany(vers: (VersionRow & { package: PackageRow })[], owner: User, doer: User | null) {
    const creatorIds = [...new Set(vers.map((v) => v.creatorId))];
    const repoIds = [...new Set(vers.map((v) => v.package.repoId).filter((id): id is number => !!id))];
    const [creators, repos] = await Promise.all([
      creatorIds.length ? this.prisma.user.findMany({ where: { id: { in: creatorIds } } }) : [],
      repoIds.length ? this.prisma.repository.findMany({ where: { id: { in: repoIds } }, include: { owner: true } }) : [],
    ]);
    const modes = await this.permissions.repoPermissions(doer, repos);
    const repoJson = new Map<number, unknown>();
    repos.forEach((r, i) => {
      if (modes[i].mode >= AccessMode.Read) repoJson.set(r.id, this.convert.repo(r, modes[i]));
    });
    const byId = new Map(creators.map((u) => [u.id, u]));
    return vers.map((v) => this.versionJson(v, owner, doer, byId.get(v.creatorId) ?? null, v.package.repoId ? (repoJson.get(v.package.repoId) ?? null) : null));
  }

  async toJson(ver: VersionRow & { package: PackageRow }, owner: User, doer: User | null) {
    return (await this.toJsonMany([ver], owner, doer))[0];
  }

  private versionJson(ver: VersionRow & { package: PackageRow }, owner: User, doer: User | null, creator: User | null, repository: unknown) {
    const p = ver.package;
    return {
      id: ver.id,
      owner: this.convert.userFor(owner, doer),
      repository,
      creator: creator ? this.convert.userFor(creator, doer) : null,
      type: p.type,
      name: p.name,
      version: ver.version,
      html_url: `${this.config.rootUrl}${encodeURIComponent(owner.name)}/-/packages/${p.type}/${encodeURIComponent(p.name)}/${encodeURIComponent(ver.version)}`,
      created_at: fmtTime(ver.createdAt),
    };
  }

  filesJson(files: { id: number; size: bigint; name: string; hashMd5: string; hashSha1: string; hashSha256: string; hashSha512: string }[]) {
    return files.map((f) => ({ id: f.id, Size: Number(f.size), name: f.name, md5: f.hashMd5, sha1: f.hashSha1, sha256: f.hashSha256, sha512: f.hashSha512 }));
  }

  /** Cron cleanup: blobs no file points at any more. Returns the number removed. */
  async cleanupBlobs(): Promise<number> {
    const root = this.config.packagesDir;
    let removed = 0;
    const used = new Set((await this.prisma.packageFile.findMany({ select: { hashSha256: true } })).map((f) => f.hashSha256));
    const walk = async (dir: string, depth: number): Promise<void> => {
      const entries = await fsp.readdir(dir, { withFileTypes: true }).catch(() => []);
      for (const e of entries) {
        const p = path.join(dir, e.name);
        if (e.isDirectory() && depth < 2 && e.name !== 'tmp') await walk(p, depth + 1);
        else if (e.isFile() && depth === 2 && !used.has(e.name)) {
          // A blob younger than an hour may belong to an upload still being recorded.
          const st = await fsp.stat(p).catch(() => null);
          if (!st || Date.now() - st.mtimeMs < 3600_000) continue;
          await fsp.rm(p, { force: true });
          removed++;
        }
      }
    };
    await walk(root, 0);
    return removed;
  }
}
