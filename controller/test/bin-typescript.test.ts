/**
 * bin/typescript.js, the loader the controller's bin runs its TypeScript sources with: a .ts file
 * runs (types stripped, imports of packages as Node loads them), its compiled form is reused on
 * the next start, and an error's stack names the line of the TypeScript source.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const LOADER = path.resolve(__dirname, '../../bin/typescript.js');
const REPO = path.resolve(__dirname, '../..');

describe('bin/typescript.js', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-ts-loader-'));
    // Types, an enum, a default import of a CommonJS package (esModuleInterop), an extensionless
    // relative import of another .ts file, and a throw on a known line (11).
    writeFileSync(path.join(dir, 'helper.ts'), `export enum Mode { A = 'a', B = 'b' }\nexport const twice = (n: number): number => n * 2;\n`);
    writeFileSync(
      path.join(dir, 'main.ts'),
      [
        `import yaml from ${JSON.stringify(require.resolve('yaml', { paths: [REPO] }))};`,
        `import { Mode, twice } from './helper';`,
        `interface Out { mode: Mode; n: number; doc: unknown }`,
        `const out: Out = { mode: Mode.B, n: twice(21), doc: yaml.parse('a: 1') };`,
        `console.log(JSON.stringify(out));`,
        `function fail(): never {`,
        `  // padding so the throw sits on a line`,
        `  // the compiled output does not share`,
        `  // with the source`,
        `  if (process.argv.includes('--fail'))`,
        `    throw new Error('boom');`,
        `  process.exit(0);`,
        `}`,
        `fail();`,
      ].join('\n'),
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const run = (...args: string[]) => spawnSync(process.execPath, ['-r', LOADER, path.join(dir, 'main.ts'), ...args], { cwd: REPO, encoding: 'utf8' });

  it('runs a TypeScript file with its imports', () => {
    const r = run();
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({ mode: 'b', n: 42, doc: { a: 1 } });
  });

  it("reports errors at the TypeScript source's lines", () => {
    const r = run('--fail');
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(`${path.join(dir, 'main.ts')}:11`);
  });

  it('reuses the compiled files on the next start', () => {
    const cache = path.join(REPO, 'node_modules', '.cache', 'portcullis-ts');
    run();
    const before = readdirSync(cache).length;
    expect(run().status).toBe(0);
    expect(readdirSync(cache).length).toBe(before);
  });
});
