/**
 * The agent protocol, in one place: the controller's config server (configserver/) and
 * portcullis-agent (agent/) both import it and nothing of each other. messages.ts: the paths,
 * frames and reports; delta.ts: a new config as line edits of the last one; version.ts: a
 * config's version (a hash of its files, the same on every replica).
 */
export * from './messages';
export { applyDelta, diffLines, makeDelta, type FilesDelta } from './delta';
export { configVersion } from './version';
