/**
 * Runs the controller's TypeScript sources without a build step: each .ts file is turned into
 * CommonJS by esbuild (types stripped, nothing bundled) when it is first required, and the result
 * is kept on disk, keyed by the file's contents, so later starts read it back.
 *
 * Only .ts files go through here. Packages load as Node loads them (an ES module such as
 * @kubernetes/client-node through Node's own require of ES modules): a general-purpose loader
 * such as tsx also rewrites every ES module package into CommonJS with a source map, which held
 * ~40 MB more of a Kubernetes-mode controller's memory than the same package loaded by Node.
 * Source maps are kept for the .ts files, so stack traces name their lines.
 */
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const Module = require('node:module');

const ROOT = path.resolve(__dirname, '..');
const CACHE_DIR = path.join(ROOT, 'node_modules', '.cache', 'portcullis-ts');

let esbuild;
let version;
function compile(source, filename) {
  esbuild ??= require('esbuild');
  return esbuild.transformSync(source, {
    loader: 'ts',
    format: 'cjs',
    target: `node${process.versions.node.split('.')[0]}`,
    sourcemap: 'inline',
    sourcefile: filename,
    // tsconfig.json's esModuleInterop: default imports of CommonJS packages.
    tsconfigRaw: { compilerOptions: { esModuleInterop: true } },
  }).code;
}

function load(module, filename) {
  const source = fs.readFileSync(filename, 'utf8');
  version ??= require('esbuild/package.json').version;
  const key = crypto.createHash('sha256').update(`${version}\0${filename}\0${source}`).digest('hex');
  const cached = path.join(CACHE_DIR, `${key}.js`);
  let code;
  try {
    code = fs.readFileSync(cached, 'utf8');
  } catch {
    code = compile(source, filename);
    // Written aside and renamed, so processes starting at once never read half a file.
    try {
      fs.mkdirSync(CACHE_DIR, { recursive: true });
      const tmp = `${cached}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, code);
      fs.renameSync(tmp, cached);
    } catch {
      /* a read-only checkout: compile again next time */
    }
  }
  module._compile(code, filename);
}

/**
 * Packages load with source maps off: with them on, Node reads and keeps the .js.map files that
 * packages ship (@kubernetes/client-node's held ~11 MB), where only our own lines are wanted in
 * stack traces. A package is compiled, and its maps read, while its file loads, so switching
 * them off for that time is enough; a stack trace through it still maps the .ts frames.
 */
const loadJs = Module._extensions['.js'];
Module._extensions['.js'] = function loadPackageJs(module, filename) {
  if (!filename.includes(`${path.sep}node_modules${path.sep}`)) return loadJs.call(this, module, filename);
  process.setSourceMapsEnabled(false);
  try {
    return loadJs.call(this, module, filename);
  } finally {
    process.setSourceMapsEnabled(true);
  }
};
Module._extensions['.ts'] = load;
process.setSourceMapsEnabled(true);
