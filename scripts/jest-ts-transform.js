/**
 * Jest transform for the repository's TypeScript: esbuild's per-file TypeScript -> CommonJS
 * compile, with an inline source map so stack traces point at the .ts lines.
 *
 * The semantics are tsc's for this tree because tsconfig.json sets isolatedModules: every file
 * already has to compile on its own (no const enums read across files, no re-exported types
 * without `export type`), which is exactly what a per-file compiler can do. The compiler
 * options that change emitted code are passed through from tsconfig.json (target; strict mode,
 * "use strict" atop each file; class fields with define semantics as ES2022 has them;
 * esModuleInterop's default-import rule, which esbuild's CommonJS output follows through the
 * __esModule flag). Type errors are `tsc
 * --noEmit`'s job (npm test and .ci/run run it), as they were with ts-jest's diagnostics off.
 */
const { transformSync } = require('esbuild');
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');

const tsconfigText = fs.readFileSync(path.join(__dirname, '..', 'tsconfig.json'), 'utf8');
const { compilerOptions } = JSON.parse(tsconfigText);
const esbuildVersion = require('esbuild/package.json').version;
const selfText = fs.readFileSync(__filename, 'utf8');

const tsconfigRaw = {
  compilerOptions: {
    target: compilerOptions.target,
    // strict implies alwaysStrict: tsc puts "use strict" atop every CommonJS file, and tests
    // rely on strict mode (a write to a frozen object throws).
    strict: compilerOptions.strict,
    alwaysStrict: compilerOptions.alwaysStrict,
    useDefineForClassFields: compilerOptions.useDefineForClassFields,
    experimentalDecorators: compilerOptions.experimentalDecorators,
    verbatimModuleSyntax: compilerOptions.verbatimModuleSyntax,
    preserveValueImports: compilerOptions.preserveValueImports,
  },
};

module.exports = {
  getCacheKey(source, filename) {
    return crypto.createHash('sha256').update(esbuildVersion).update(selfText).update(tsconfigText).update(filename).update(source).digest('hex');
  },
  process(source, filename) {
    const out = transformSync(source, {
      format: 'cjs',
      loader: 'ts',
      target: String(compilerOptions.target || 'es2022').toLowerCase(),
      platform: 'node',
      // tsc's CommonJS output turns import() into a require() (jest's module runtime cannot
      // import() without --experimental-vm-modules; the generated Prisma client uses it).
      supported: { 'dynamic-import': false },
      tsconfigRaw,
      sourcefile: filename,
      sourcemap: 'both',
      sourcesContent: false,
      logLevel: 'silent',
    });
    return { code: out.code, map: out.map };
  },
};
