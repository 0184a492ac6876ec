import { promises as fs, watch, FSWatcher } from 'fs';
import * as path from 'path';
import type { Logger } from '../../log';
import { ChunkMemo, FileParse, isManifestName, listManifestTree, parseManifestText, SourceDoc } from './manifests';
import { groupOf, identify, keyOf } from './identity';
import { ResourceRecord, ResourceState } from './state';
import { readStatusFile, StatusEntry, StatusYamlCache, writeStatusFile } from './status-file';
import { freezeDerivedDocument, isKnownAcyclic } from '../../resources/readonly';

export { writeFileAtomic } from './atomic';
export { parseManifestText } from './manifests';
export { STATUS_FILE } from './status-file';
export type { StatusEntry } from './status-file';

/** Reads in flight at once while scanning (well under any open-files limit). */
const READ_CONCURRENCY = 32;

/**
 * The files' texts, in order (undefined: removed meanwhile), read several at a time: one after
 * another, each read waited for a thread of the pool and a turn of the event loop, which made a
 * scan of 1,000 one-route files take 170-320 ms on a busy machine.
 */
async function readFiles(dir: string, names: string[]): Promise<(string | undefined)[]> {
  const out: (string | undefined)[] = new Array(names.length);
  let next = 0;
  const worker = async () => {
    while (next < names.length) {
      const i = next++;
      try {
        out[i] = await fs.readFile(path.join(dir, names[i]), 'utf8');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(READ_CONCURRENCY, names.length) }, worker));
  return out;
}

/** A manifest document with the metadata the provider keeps filled in (resources ManifestDoc). */
export interface ProvidedDoc {
  source: string; // "file.yaml:12"
  doc: unknown;
}

export interface FileProviderOptions {
  manifestsDir: string;
  stateDir: string;
  log: Logger;
  /** Quiet time after the last file event before rescanning (editors write in bursts). */
  debounceMs?: number;
  now?: () => string;
}

interface FileEntry {
  text: string;
  parse: FileParse;
  /** Its documents by text, so the next version of the file parses only the ones that changed. */
  memo: ChunkMemo;
  /** The documents of the last version that parsed; kept while the file is broken. */
  good?: SourceDoc[];
  brokenSince?: string;
}

/**
 * Standalone mode's view of the world: a folder of multi-document YAML manifests stands in for
 * the API server. It keeps per resource what the API server would (uid, generation,
 * creationTimestamp) in the state dir, and writes statuses back as <state-dir>/status.yaml.
 */
export class FileProvider {
  readonly manifestsDir: string;
  readonly stateDir: string;
  private readonly log: Logger;
  private readonly state: ResourceState;
  private readonly files = new Map<string, FileEntry>();
  private readonly debounceMs: number;
  private readonly now: () => string;
  /** One non-recursive watcher per folder (see watch()). */
  private readonly watchers = new Map<string, FSWatcher>();
  private onChange?: () => void;
  private timer?: NodeJS.Timeout;
  private saving?: Promise<void>;
  private lastRecords = new Map<string, ResourceRecord>();
  /**
   * Stamped output per parsed document object: a document object lives as long as its text is
   * unchanged (manifests.ts reuses it across versions of its file), so an unchanged document
   * costs no hashing on the next scan and is handed out as the same object, which the parse
   * stages remember (1,000 routes: one route edited -> only that document is looked at again).
   */
  private readonly statusCache: StatusYamlCache = new Map();
  private stampCache = new WeakMap<object, { key: string; record: ResourceRecord; provided: ProvidedDoc }>();

  constructor(options: FileProviderOptions) {
    this.manifestsDir = path.resolve(options.manifestsDir);
    this.stateDir = path.resolve(options.stateDir);
    this.log = options.log;
    this.state = ResourceState.forStateDir(this.stateDir);
    this.debounceMs = options.debounceMs ?? 25;
    this.now = options.now ?? (() => new Date().toISOString());
  }

  /** Loads what earlier runs kept: resource metadata and the last statuses written. */
  async open(): Promise<{ previousStatuses: StatusEntry[] }> {
    const stat = await fs.stat(this.manifestsDir).catch(() => undefined);
    if (!stat?.isDirectory()) throw new Error(`--manifests ${this.manifestsDir}: not a directory`);
    await fs.mkdir(this.stateDir, { recursive: true });
    await this.state.load();
    const previous = await readStatusFile(this.stateDir);
    if (previous.error) {
      this.log.warn('previous status.yaml unreadable; lastTransitionTime restarts from now', { error: previous.error });
    }
    return { previousStatuses: previous.entries };
  }

  /**
   * Reads the folder (only files whose text changed are parsed again) and returns every
   * resource document with metadata.generation / creationTimestamp / uid filled in.
   */
  async scan(): Promise<ProvidedDoc[]> {
    const { files: names, dirs } = await listManifestTree(this.manifestsDir);
    this.syncWatchers(dirs);
    const texts = await readFiles(this.manifestsDir, names);
    const seen = new Set<string>();
    for (const [i, name] of names.entries()) {
      const text = texts[i];
      if (text === undefined) continue;
      seen.add(name);
      const entry = this.files.get(name);
      if (entry && entry.text === text) continue;
      const { memo, ...parse } = parseManifestText(name, text, entry?.memo);
      const next: FileEntry = { text, parse, memo, good: entry?.good };
      if (parse.ok) {
        next.good = parse.docs;
        if (entry?.brokenSince) this.log.info('manifest file fixed', { file: name });
      } else {
        next.brokenSince = entry?.brokenSince ?? this.now();
        const errors = parse.errors.map((e) => `${name}:${e.line}:${e.column}: ${e.message}`);
        if (next.good) {
          this.log.error('manifest file has YAML errors; keeping its last good version (its resources stay as they were)', {
            file: name,
            errors,
            keptResources: next.good.length,
          });
        } else {
          this.log.error('manifest file has YAML errors and no earlier good version; its resources are not applied', {
            file: name,
            errors,
          });
        }
      }
      this.files.set(name, next);
    }
    for (const name of [...this.files.keys()]) {
      if (!seen.has(name)) {
        this.files.delete(name);
        this.log.info('manifest file removed; its resources are deleted', { file: name });
      }
    }
    return this.stamp();
  }

  private async stamp(): Promise<ProvidedDoc[]> {
    const now = this.now();
    const out: ProvidedDoc[] = [];
    const keys = new Map<string, string>(); // key -> first source
    const records = new Map<string, ResourceRecord>();
    for (const [name, entry] of [...this.files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const docs = entry.parse.ok ? entry.parse.docs : entry.good ?? [];
      for (const source of docs) {
        const where = `${source.file}:${source.line}`;
        const id = identify(source.doc);
        const cached = id ? this.stampCache.get(source.doc as object) : undefined;
        if (!id || (!cached && !isKnownAcyclic(source.doc) && !isJson(source.doc))) {
          // Not nameable, or a cycle (a YAML alias inside itself) no spec hash can be taken
          // of: the resource parser reports it; nothing to keep.
          out.push({ source: where, doc: source.doc });
          continue;
        }
        const key = cached?.key ?? keyOf({ ...id, namespace: id.namespace || 'default' });
        const first = keys.get(key);
        if (first) {
          this.log.warn('the same resource is defined twice; the first definition wins', {
            resource: key,
            used: first,
            ignored: where,
          });
          continue;
        }
        keys.set(key, where);
        const current = this.state.getByKey(key);
        if (cached && current && sameRecord(current, cached.record) && current.source === name) {
          records.set(key, current);
          // Lines above it changed: the same document (and parse outcome), a new position.
          if (cached.provided.source !== where) cached.provided = { source: where, doc: cached.provided.doc };
          out.push(cached.provided);
          continue;
        }
        const { record, changed } = this.state.observe({ ...id, namespace: id.namespace || 'default' }, source.doc, name, now);
        records.set(key, record);
        if (changed && this.lastRecords.size) {
          this.log.debug('resource changed', { resource: key, generation: record.generation });
        }
        const provided = { source: where, doc: freezeDerivedDocument(withMetadata(source.doc, record), source.doc) };
        this.stampCache.set(source.doc as object, { key, record, provided });
        out.push(provided);
      }
    }
    // A resource of a broken file with no good version is not applied, but it keeps its
    // generation and creationTimestamp: fixing the file must not look like a re-creation.
    const keep = new Set(records.keys());
    for (const [name, entry] of this.files) {
      if (!entry.parse.ok && !entry.good) {
        for (const [key] of this.state.entriesFrom(name)) keep.add(key);
      }
    }
    const removed = this.state.prune(keep);
    for (const key of removed) this.log.info('resource deleted', { resource: key });
    this.queueSave();
    this.lastRecords = records;
    return out;
  }

  /**
   * resources.json is written (with fsync) in the background of the reconcile, not before
   * scan() returns: that fsync was a third of a one-file-change scan (and 10-30 ms when the
   * disk is busy). Saves run one after another; flush() waits for them (the CLI's stop does).
   * A crash in between loses at most the last change's record: its generation is counted again
   * from the saved spec, and only a resource created in that change gets a new creationTimestamp.
   */
  private queueSave(): void {
    // A failed save leaves the state dirty, so the next one writes it again. After a macrotask
    // turn: as a microtask, its sorting and JSON text (1,000 resources: a few ms) ran before the
    // reconcile resumed from scan(), in the way of the change; now it runs while the reconcile
    // waits for nginx.
    const next = (this.saving ?? Promise.resolve())
      .catch(() => undefined)
      .then(() => new Promise((resolve) => setImmediate(resolve)))
      .then(() => this.state.save());
    next.catch((err: Error) => this.log.error('saving resources.json failed; retried on the next change', { error: err.message }));
    this.saving = next;
  }

  /** Resolves when resources.json holds the state of the last scan (rejects if that save failed). */
  async flush(): Promise<void> {
    await this.saving;
  }

  /** What the provider keeps about a resource, for status.yaml's metadata. */
  recordFor(apiVersion: string, kind: string, namespace: string | undefined, name: string): ResourceRecord | undefined {
    const group = groupOf(apiVersion);
    return (
      this.lastRecords.get(keyOf({ group, kind, namespace: namespace || 'default', name })) ??
      this.state.get({ group, kind, namespace: namespace || 'default', name })
    );
  }

  async writeStatuses(entries: StatusEntry[]): Promise<void> {
    await writeStatusFile(this.stateDir, entries, (e) => {
      const record = this.recordFor(e.apiVersion, e.kind, e.namespace, e.name);
      return record ? { creationTimestamp: record.creationTimestamp } : undefined;
    }, this.statusCache);
  }

  /**
   * Calls `onChange` (debounced) whenever something under the manifests folder changes.
   * fs.watch only says "something happened", so the consumer rescans the whole folder, which
   * is cheap because unchanged files are not parsed again. One plain inotify watch per folder:
   * Node 20's recursive fs.watch on Linux follows inodes and misses the deletion of a file an
   * editor replaced by rename (measured here), so we keep the folder watches ourselves and
   * update them on every scan.
   */
  watch(onChange: () => void): void {
    this.onChange = onChange;
    this.syncWatchers(['']);
  }

  private fire(complete = false): void {
    if (!this.onChange) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.onChange?.();
      },
      complete ? Math.min(1, this.debounceMs) : this.debounceMs,
    );
  }

  private syncWatchers(dirs: string[]): void {
    if (!this.onChange) return;
    const wanted = new Set(dirs);
    let added = false;
    for (const rel of wanted) {
      if (this.watchers.has(rel)) continue;
      try {
        // A manifest renamed into place (how tools write atomically) or deleted is complete:
        // rescan at once. Writes in place ("change") get the settling time, as may a new file
        // still being written (its rename event comes first).
        const w = watch(path.join(this.manifestsDir, rel), { persistent: true }, (event, name) =>
          this.fire(event === 'rename' && typeof name === 'string' && isManifestName(path.basename(name))),
        );
        w.on('error', (err) => {
          // A watched subfolder that is removed ends its watch; the parent's event rescans.
          if (rel === '') this.log.error('watching the manifests folder failed', { dir: this.manifestsDir, error: err });
          w.close();
          this.watchers.delete(rel);
        });
        this.watchers.set(rel, w);
        added = rel !== '' || added;
      } catch (err) {
        this.log.warn('cannot watch a manifests folder', { dir: rel || '.', error: err as Error });
      }
    }
    for (const [rel, w] of this.watchers) {
      if (!wanted.has(rel) && rel !== '') {
        w.close();
        this.watchers.delete(rel);
      }
    }
    // Files written into a new subfolder before its watch existed: look once more.
    if (added) this.fire();
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.onChange = undefined;
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
  }
}

function sameRecord(a: ResourceRecord, b: ResourceRecord): boolean {
  return (
    a.uid === b.uid &&
    a.generation === b.generation &&
    a.creationTimestamp === b.creationTimestamp &&
    a.specHash === b.specHash &&
    a.source === b.source
  );
}

function isJson(doc: unknown): boolean {
  try {
    JSON.stringify(doc);
    return true;
  } catch {
    return false;
  }
}

function withMetadata(doc: unknown, record: ResourceRecord): unknown {
  const d = doc as Record<string, unknown>;
  const metadata = { ...(d.metadata as Record<string, unknown>) };
  metadata.generation = record.generation;
  metadata.creationTimestamp = record.creationTimestamp;
  metadata.uid = record.uid;
  return { ...d, metadata };
}
