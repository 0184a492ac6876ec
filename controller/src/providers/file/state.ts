import { createHash, randomUUID } from 'crypto';
import * as path from 'path';
import { readIfExists, writeFileAtomic } from './atomic';
import { canonicalJson, keyOf, ResourceId, specOf } from './identity';

/**
 * What an API server would keep about each resource and the file provider has to keep itself:
 * uid, generation and creationTimestamp, persisted in <state-dir>/resources.json so they
 * survive a restart of the controller.
 */
export interface ResourceRecord {
  uid: string;
  generation: number;
  creationTimestamp: string;
  specHash: string;
  /** The manifest file the resource was last read from (relative to the manifests folder). */
  source: string;
}

interface StateFile {
  version: 1;
  resources: Record<string, ResourceRecord>;
}

export const STATE_FILE = 'resources.json';

export interface Stamped {
  record: ResourceRecord;
  changed: boolean; // created, or spec changed (generation grew)
}

function hashSpec(doc: unknown): string {
  return createHash('sha256').update(canonicalJson(specOf(doc))).digest('hex').slice(0, 32);
}

function manifestTimestamp(doc: unknown): string | undefined {
  const meta = (doc as { metadata?: { creationTimestamp?: unknown } }).metadata;
  const value = meta?.creationTimestamp;
  if (value instanceof Date && !isNaN(value.getTime())) return value.toISOString();
  if (typeof value === 'string' && !isNaN(Date.parse(value))) return new Date(value).toISOString();
  return undefined;
}

function manifestUid(doc: unknown): string | undefined {
  const uid = (doc as { metadata?: { uid?: unknown } }).metadata?.uid;
  return typeof uid === 'string' && uid ? uid : undefined;
}

export class ResourceState {
  private records = new Map<string, ResourceRecord>();
  private dirty = false;

  constructor(private readonly file: string) {}

  static forStateDir(stateDir: string): ResourceState {
    return new ResourceState(path.join(stateDir, STATE_FILE));
  }

  async load(): Promise<void> {
    const text = await readIfExists(this.file);
    if (text === undefined) return;
    let parsed: StateFile;
    try {
      parsed = JSON.parse(text) as StateFile;
    } catch (err) {
      throw new Error(`${this.file}: not valid JSON (${(err as Error).message}); move it away to start afresh`);
    }
    this.records = new Map(Object.entries(parsed.resources ?? {}));
  }

  getByKey(key: string): ResourceRecord | undefined {
    return this.records.get(key);
  }

  get(id: ResourceId): ResourceRecord | undefined {
    return this.records.get(keyOf(id));
  }

  /**
   * Records that `doc` was seen now: a new resource gets generation 1, a changed spec bumps
   * the generation, anything else (labels, annotations, moving to another file) keeps it.
   */
  observe(id: ResourceId, doc: unknown, source: string, now: string): Stamped {
    const key = keyOf(id);
    const specHash = hashSpec(doc);
    const previous = this.records.get(key);
    const ownTimestamp = manifestTimestamp(doc);
    const ownUid = manifestUid(doc);
    if (!previous) {
      const record: ResourceRecord = {
        uid: ownUid ?? randomUUID(),
        generation: 1,
        creationTimestamp: ownTimestamp ?? now,
        specHash,
        source,
      };
      this.records.set(key, record);
      this.dirty = true;
      return { record, changed: true };
    }
    const changed = previous.specHash !== specHash;
    const record: ResourceRecord = {
      uid: ownUid ?? previous.uid,
      generation: changed ? previous.generation + 1 : previous.generation,
      creationTimestamp: ownTimestamp ?? previous.creationTimestamp,
      specHash,
      source,
    };
    if (canonicalJson(record) !== canonicalJson(previous)) {
      this.records.set(key, record);
      this.dirty = true;
    }
    return { record, changed };
  }

  /**
   * Forgets resources that are gone (deleted from their file, or their file deleted), as an
   * API server forgets a deleted object: re-creating it starts again at generation 1.
   * `keep` says which keys are still present (or held as last known good).
   */
  prune(keep: Set<string>): string[] {
    const removed: string[] = [];
    for (const key of this.records.keys()) {
      if (!keep.has(key)) {
        this.records.delete(key);
        removed.push(key);
      }
    }
    if (removed.length) this.dirty = true;
    return removed;
  }

  /** Resources last read from `file`. */
  entriesFrom(file: string): [string, ResourceRecord][] {
    return [...this.records].filter(([, r]) => r.source === file);
  }

  async save(): Promise<void> {
    if (!this.dirty) return;
    await writeFileAtomic(this.file, stateFileText(this.records));
    this.dirty = false;
  }
}

/**
 * resources.json's text: JSON.stringify(StateFile, null, 2), keys sorted, made of each record's
 * text. A record is replaced, never changed (observe), so its text is made once: a one-route
 * change saved the text of a thousand records again (while nginx parsed the new config).
 */
export function stateFileText(records: Map<string, ResourceRecord>): string {
  if (records.size === 0) return JSON.stringify({ version: 1, resources: {} } satisfies StateFile, null, 2) + '\n';
  const keys = [...records.keys()].sort();
  let text = '{\n  "version": 1,\n  "resources": {';
  for (let i = 0; i < keys.length; i++) text += `${i ? ',' : ''}\n    ${JSON.stringify(keys[i])}: ${recordText(records.get(keys[i])!)}`;
  return text + '\n  }\n}\n';
}

const recordTexts = new WeakMap<ResourceRecord, string>();
function recordText(record: ResourceRecord): string {
  let text = recordTexts.get(record);
  if (text === undefined) {
    // At the depth resources.json holds it: two levels in.
    text = JSON.stringify(record, null, 2).replace(/\n/g, '\n    ');
    recordTexts.set(record, text);
  }
  return text;
}
