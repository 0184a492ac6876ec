/**
 * Config generations on disk. Each apply writes a fresh directory `<prefix>/conf.d-<n>`; the
 * live config is the symlink `<prefix>/conf`, replaced atomically (rename of a new symlink),
 * so nginx never reads a half-written config and the previous generation stays intact until
 * the new one serves.
 */
import * as fs from 'fs';
import * as path from 'path';
import type { PrefixLayout } from '../render/layout';

/** uid/gid nginx workers switch to when the master runs as root (nginx's default user: nobody). */
function workerIds(): { uid: number; gid: number } {
  try {
    const line = fs.readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith('nobody:'));
    const [, , uid, gid] = line!.split(':');
    return { uid: Number(uid), gid: Number(gid) };
  } catch {
    return { uid: 65534, gid: 65534 };
  }
}

export function ensurePrefixDirs(layout: PrefixLayout): void {
  for (const dir of [layout.prefix, layout.logsDir, layout.runDir, layout.tempDir, ...Object.values(layout.temp)]) {
    fs.mkdirSync(dir, { recursive: true });
  }
  // Run as root, nginx's workers drop to `nobody` and must write request bodies and proxied
  // responses into the temp dirs: hand those (only those) to that user.
  if (process.getuid?.() === 0) {
    const { uid, gid } = workerIds();
    for (const dir of Object.values(layout.temp)) fs.chownSync(dir, uid, gid);
    // ...and let them through the directories above (search permission only, no listing).
    for (const dir of [layout.prefix, layout.tempDir]) fs.chmodSync(dir, fs.statSync(dir).mode | 0o111);
  }
}

/**
 * When run as root, the first directory above the prefix that nginx's workers (nobody) cannot
 * pass through; they would then fail to spool large bodies (500). undefined when all is well.
 */
export function blockedAncestor(layout: PrefixLayout): string | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (let dir = path.dirname(layout.prefix); ; dir = path.dirname(dir)) {
    try {
      if ((fs.statSync(dir).mode & 0o001) === 0) return dir;
    } catch {
      return dir;
    }
    if (dir === path.dirname(dir)) return undefined;
  }
}

/** Files holding private keys: written 0600, never logged. */
export function isSecretFile(rel: string): boolean {
  return rel.startsWith('secrets/');
}

/** Writes the files of one generation into a new directory and returns its path. */
export function writeGeneration(layout: PrefixLayout, id: string, files: Record<string, string>): string {
  const dir = path.join(layout.prefix, `conf.d-${id}`);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  for (const [rel, content] of Object.entries(files)) {
    const target = path.resolve(dir, rel);
    if (!target.startsWith(dir + path.sep)) throw new Error(`config file path escapes the config dir: ${rel}`);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    // Certificates and their keys (secrets/, see model secretFiles) are readable by us alone.
    fs.writeFileSync(target, content, { mode: isSecretFile(rel) ? 0o600 : 0o644 });
  }
  return dir;
}

/** Points <prefix>/conf at `dir` atomically. */
export function switchLive(layout: PrefixLayout, dir: string): void {
  const tmp = `${layout.confLink}.tmp-${process.pid}`;
  fs.rmSync(tmp, { force: true });
  fs.symlinkSync(path.basename(dir), tmp);
  try {
    const st = fs.lstatSync(layout.confLink);
    // A real directory left by something else cannot be renamed over: move it aside.
    if (st.isDirectory()) fs.renameSync(layout.confLink, `${layout.confLink}.old-${Date.now()}`);
  } catch {
    /* no live config yet */
  }
  fs.renameSync(tmp, layout.confLink);
}

/** The generation directory <prefix>/conf points at, if any. */
export function liveDir(layout: PrefixLayout): string | undefined {
  try {
    return path.resolve(layout.prefix, fs.readlinkSync(layout.confLink));
  } catch {
    return undefined;
  }
}

/** Removes generation directories other than those to keep. */
export function pruneGenerations(layout: PrefixLayout, keep: (string | undefined)[]): void {
  const kept = new Set(keep.filter(Boolean).map((d) => path.basename(d!)));
  for (const name of fs.readdirSync(layout.prefix)) {
    if (name.startsWith('conf.d-') && !kept.has(name)) fs.rmSync(path.join(layout.prefix, name), { recursive: true, force: true });
  }
}
