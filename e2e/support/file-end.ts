/**
 * Cleanups that run when a test file ends, after its own afterAll hooks, whether its tests and
 * hooks passed or not (scripts/jest-environment.js runs them): the helpers that start processes
 * register the stopping of each, so no process outlives its file because a test failed before
 * its cleanup, or a hook threw before reaching it.
 */
type Cleanup = () => Promise<void>;

const holder = globalThis as { __portcullisFileEnd?: Set<Cleanup> };

/** Registers `cleanup` for the end of the current test file; the function returned unregisters it. */
export function atFileEnd(cleanup: Cleanup): () => void {
  const cleanups = (holder.__portcullisFileEnd ??= new Set());
  cleanups.add(cleanup);
  return () => cleanups.delete(cleanup);
}
