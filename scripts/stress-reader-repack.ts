/**
 * Stress loop: a long-lived object reader (git/reader.ts) asked for objects that exist while
 * real `git repack -a -d` runs (housekeeping.ts) move them from loose files and old packs into
 * new packs. Prints how many look-ups were made during repacks and how many answered "missing".
 *   [FRESH=1] npx tsx scripts/stress-reader-repack.ts [ROUNDS]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GitReader } from '../forge-api/src/services/git/reader';
import { RepoHousekeeping } from '../forge-api/src/services/git/housekeeping';

const rounds = Number(process.argv[2] ?? 40);
const dir = mkdtempSync(path.join(os.tmpdir(), 'stress-reader-'));
const repo = path.join(dir, 'r.git');
const git = (args: string[], input?: string) =>
  execFileSync('git', ['-c', 'user.name=x', '-c', 'user.email=x@example.com', '--git-dir', repo, ...args], { input, encoding: 'utf8' }).trim();

async function main() {
  execFileSync('git', ['init', '-q', '--bare', repo]);
  const oids: string[] = [];
  let parent = '';
  const addCommits = (n: number) => {
    for (let i = 0; i < n; i++) {
      const blob = git(['hash-object', '-w', '--stdin'], `content ${oids.length} ${Math.random()}\n`);
      const tree = git(['mktree'], `100644 blob ${blob}\tf${oids.length}.txt\n`);
      const commit = git(['commit-tree', tree, ...(parent ? ['-p', parent] : []), '-m', `c${oids.length}`]);
      git(['update-ref', 'refs/heads/main', commit]);
      parent = commit;
      oids.push(blob, tree, commit);
    }
  };
  addCommits(30);
  const hk = new RepoHousekeeping({ delayMs: 0 });
  const reader = new GitReader(repo);
  let during = 0;
  let missing = 0;
  let total = 0;
  let errors = 0;
  let stop = false;
  const missed: string[] = [];
  const loop = async (kind: 'info' | 'read') => {
    while (!stop) {
      const snapshot = oids.slice();
      const answers = await Promise.all(snapshot.map((o) => (kind === 'info' ? reader.info(o) : reader.read(o)).catch(() => 'error' as const)));
      const repacking = hk.repacking(repo);
      // FRESH=1: a new process for every round of look-ups, so process starts meet the repacks too.
      if (process.env.FRESH === '1') await reader.close();
      answers.forEach((a, i) => {
        total++;
        if (repacking) during++;
        if (a === 'error') errors++;
        else if (a === null) {
          missing++;
          if (missed.length < 10) missed.push(snapshot[i]);
        }
      });
    }
  };
  const loops = [loop('info'), loop('read'), loop('info')];
  const started = Date.now();
  for (let r = 0; r < rounds; r++) {
    addCommits(5); // new loose objects, so each repack writes a new pack and deletes the old
    await hk.run(repo);
  }
  stop = true;
  await Promise.all(loops);
  await reader.close();
  console.log(
    JSON.stringify({ rounds, repacks: hk.runs, objects: oids.length, lookups: total, lookupsDuringRepack: during, missing, errors, spawned: reader.spawned, seconds: (Date.now() - started) / 1000, missed }),
  );
  rmSync(dir, { recursive: true, force: true });
}
void main();
