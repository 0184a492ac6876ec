/**
 * Runs a built image's entry point the way a pod with `readOnlyRootFilesystem: true` and the
 * image's own user would: the image's root filesystem (buildah mount, vfs storage) is bind-
 * mounted read-only in a private mount namespace, /tmp is a fresh tmpfs, /proc and /dev come
 * from the host, and the command runs chrooted there as the image's USER with its Env,
 * WorkingDir and Entrypoint. No daemon and no registry (none exist here).
 */
import { spawnSync } from 'child_process';

const BUILDAH = ['buildah', '--storage-driver', 'vfs'];

export interface ImageConfig {
  User?: string;
  Env?: string[];
  Entrypoint?: string[];
  Cmd?: string[];
  WorkingDir?: string;
}

function buildah(args: string[]): string {
  const res = spawnSync(BUILDAH[0], [...BUILDAH.slice(1), ...args], { encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`buildah ${args.join(' ')}: ${res.stderr}`);
  return res.stdout.trim();
}

export function imageConfig(image: string): ImageConfig {
  return JSON.parse(buildah(['inspect', '--type', 'image', image])).OCIv1.config as ImageConfig;
}

export interface RunResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** A working container of `image` whose root filesystem stays mounted until close(). */
export class ImageRoot {
  readonly config: ImageConfig;
  private readonly container: string;
  readonly root: string;

  constructor(readonly image: string) {
    this.config = imageConfig(image);
    this.container = buildah(['from', '--pull-never', image]);
    this.root = buildah(['mount', this.container]);
  }

  /**
   * Runs `entry` (default: the image's Entrypoint) with `args` inside the image. `binds` maps
   * host directories to directories under /tmp in the image (read-write, for the test's files).
   */
  run(args: string[], options: { entry?: string[]; binds?: Record<string, string>; timeoutMs?: number } = {}): RunResult {
    const user = this.config.User ?? '0:0';
    const [uid, gid = uid] = user.split(':');
    const entry = options.entry ?? this.config.Entrypoint ?? [];
    const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
    const r = q(this.root);
    const lines = [
      'set -e',
      `mount --bind ${r} ${r}`,
      `mount -o remount,bind,ro ${r}`,
      `mount -t tmpfs -o mode=1777 tmpfs ${r}/tmp`,
      `mount --rbind /proc ${r}/proc`,
      `mount --rbind /dev ${r}/dev`,
    ];
    for (const [host, inside] of Object.entries(options.binds ?? {})) {
      if (!inside.startsWith('/tmp/')) throw new Error(`bind target ${inside} must be under /tmp`);
      lines.push(`mkdir -p ${r}${q(inside)}`, `mount --bind ${q(host)} ${r}${q(inside)}`);
    }
    lines.push(
      `cd ${r}`,
      `exec chroot --userspec=${uid}:${gid} ${r} /usr/bin/env -i -C ${q(this.config.WorkingDir || '/')} ` +
        [...(this.config.Env ?? []), ...entry, ...args].map(q).join(' '),
    );
    const res = spawnSync('unshare', ['--mount', '--propagation', 'private', '--fork', 'sh', '-c', lines.join('\n')], {
      encoding: 'utf8',
      timeout: options.timeoutMs ?? 60000,
    });
    return { status: res.status, stdout: res.stdout, stderr: res.stderr };
  }

  close(): void {
    try {
      buildah(['umount', this.container]);
    } finally {
      buildah(['rm', this.container]);
    }
  }
}
