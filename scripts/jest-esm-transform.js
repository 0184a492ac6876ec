/**
 * Jest transform for ESM-only packages under node_modules (@kubernetes/client-node 2.x and
 * its ESM dependencies). Jest runs test files as CommonJS (ts-jest), and its module runtime
 * cannot require() an ES module on Node 20 even though Node itself can; so these files are
 * rewritten to CommonJS with esbuild (tsx's own compiler), once, and kept in jest's cache.
 * tsc, tsx and plain node (bin/) load the package as it is.
 */
const { transformSync } = require('esbuild');

module.exports = {
  process(source, filename) {
    const out = transformSync(source, {
      format: 'cjs',
      loader: 'js',
      target: 'node20',
      sourcefile: filename,
      sourcemap: 'inline',
      logLevel: 'silent',
    });
    return { code: out.code };
  },
};
