/**
 * List + watch of one kind, keeping a local copy of every object (client-go's reflector and
 * store, in small):
 *
 * - list (in pages) gives the objects and a resourceVersion; watch continues from that version,
 *   with bookmarks so the version stays fresh on quiet kinds;
 * - a watch that ends normally (the server's timeout) resumes from the last version seen;
 * - 410 Gone (the version was compacted away) lists again; objects whose resourceVersion did not
 *   change keep their document, so the pipeline sees no change for them;
 * - any other failure (API server down, connection cut) backs off (0.5 s doubling to 30 s) and
 *   resumes the watch from the last version, keeping the store as it was meanwhile;
 * - a kind the server does not serve (404: CRD not installed) is empty and looked for every 30 s.
 *
 * The documents handed to the pipeline are frozen and stay the same object while the object is
 * unchanged (resources/readonly.ts): the parse stages remember their outcome by identity. For
 * kinds whose status we write, status and resourceVersion are left out of the document and a
 * status-only change is not a change, so our own status writes do not wake the pipeline. The
 * API server's and kubectl's bookkeeping in metadata (managedFields, the last-applied annotation)
 * never enters the store.
 */
import type { Logger } from '../../log';
import { freezeDocument } from '../../resources/readonly';
import { ApiError, type KubeClient, type WatchEvent, type WatchHandle } from './client';
import { apiVersionOf, collectionPath, type WatchedKind } from './kinds';

export interface StoredObject {
  namespace?: string;
  name: string;
  resourceVersion: string;
  generation: number;
  /** Frozen document for the pipeline. */
  doc: unknown;
  /** The object's status as the API server has it (kinds whose status we write). */
  status: unknown;
  /** metadata without resourceVersion and bookkeeping (withoutBookkeeping), as JSON: tells a status-only change. */
  metaKey: string;
}

export interface InformerOptions {
  client: KubeClient;
  kind: WatchedKind;
  log: Logger;
  onChange: () => void;
  /** Restrict to one object by name (field selector), e.g. the one GatewayClass we serve. */
  fieldSelector?: string;
  pageSize?: number;
  minBackoffMs?: number;
  maxBackoffMs?: number;
  absentRetryMs?: number;
}

type Json = Record<string, unknown>;

/** The annotation `kubectl apply` writes: the whole object as last applied, as JSON text. */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * metadata without what the API server and kubectl keep for their own bookkeeping: the field
 * managers (managedFields) and kubectl's last-applied copy of the object. Both are copies of
 * the object's fields (the last-applied annotation is as large as the object itself), read by
 * no stage of the pipeline, and held per object for as long as it exists; everything else in
 * metadata (other annotations, labels) stays. Stripped here, where objects enter the store.
 */
export function withoutBookkeeping(meta: Json): Json {
  const { managedFields: _m, ...rest } = meta;
  const annotations = meta.annotations as Record<string, unknown> | undefined;
  if (annotations && LAST_APPLIED_ANNOTATION in annotations) {
    const { [LAST_APPLIED_ANNOTATION]: _a, ...others } = annotations;
    if (Object.keys(others).length > 0) rest.annotations = others;
    else delete rest.annotations;
  }
  return rest;
}

function objectKey(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

export class Informer {
  readonly kind: WatchedKind;
  private readonly o: InformerOptions;
  private store = new Map<string, StoredObject>();
  private resourceVersion = '';
  private synced = false;
  /** The server does not serve this kind (404 on list). */
  private absent = false;
  private stopped = true;
  private watchHandle?: WatchHandle;
  private timer?: NodeJS.Timeout;
  private backoffMs: number;
  private readonly syncWaiters: (() => void)[] = [];
  /** Lists done (first one + re-lists after 410 or errors): tests and metrics read it. */
  lists = 0;

  constructor(options: InformerOptions) {
    this.o = options;
    this.kind = options.kind;
    this.backoffMs = options.minBackoffMs ?? 500;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    void this.run();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.watchHandle?.abort();
    this.watchHandle = undefined;
    for (const w of this.syncWaiters.splice(0)) w();
  }

  hasSynced(): boolean {
    return this.synced;
  }

  isServed(): boolean {
    return !this.absent;
  }

  /** Resolves once the first list is in the store (or the kind is known to be absent). */
  waitForSync(): Promise<void> {
    if (this.synced || this.stopped) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  objects(): IterableIterator<StoredObject> {
    return this.store.values();
  }

  get size(): number {
    return this.store.size;
  }

  get(namespace: string | undefined, name: string): StoredObject | undefined {
    return this.store.get(objectKey(this.kind.namespaced ? namespace : undefined, name));
  }

  /**
   * An object the provider got back from the API server (a status write's answer): stored as a
   * watch event would store it, so the event that follows with the same version is no news.
   */
  observe(obj: Json): void {
    this.apply('MODIFIED', obj, false);
  }

  private markSynced(): void {
    if (this.synced) return;
    this.synced = true;
    for (const w of this.syncWaiters.splice(0)) w();
  }

  private async run(): Promise<void> {
    if (this.stopped) return;
    try {
      if (!this.resourceVersion) await this.list();
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        if (!this.absent) this.o.log.info('kind not served by the API server; treated as empty', { kind: this.kind.kind, group: this.kind.group });
        this.absent = true;
        if (this.store.size > 0) {
          this.store.clear();
          this.o.onChange();
        }
        this.markSynced();
        return this.later(this.o.absentRetryMs ?? 30_000);
      }
      if (err instanceof ApiError && err.status === 403 && !this.synced) {
        // Missing RBAC for one kind must not hold every other kind back: it stays empty (and
        // is asked again with backoff) and the error says which permission is missing.
        this.o.log.error('not allowed to list this kind; treated as empty until allowed', { kind: this.kind.kind, group: this.kind.group, error: err.message });
        this.markSynced();
      }
      return this.retry(err as Error, 'list');
    }
    this.watch();
  }

  private later(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.run();
    }, ms);
    this.timer.unref();
  }

  private retry(err: Error, what: string): void {
    if (this.stopped) return;
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, this.o.maxBackoffMs ?? 30_000);
    this.o.log.warn(`${what} failed; retrying`, { kind: this.kind.kind, error: err.message, retryInMs: delay });
    // Jitter: replicas (and kinds) that lost the server together do not come back in lockstep.
    this.later(Math.round(delay * (0.8 + Math.random() * 0.4)));
  }

  private async list(): Promise<void> {
    const path = collectionPath(this.kind);
    const next = new Map<string, StoredObject>();
    let cont = '';
    let rv = '';
    do {
      const q = new URLSearchParams({ limit: String(this.o.pageSize ?? 500) });
      if (cont) q.set('continue', cont);
      if (this.o.fieldSelector) q.set('fieldSelector', this.o.fieldSelector);
      let page: { metadata?: { resourceVersion?: string; continue?: string }; items?: Json[] };
      try {
        page = await this.o.client.request('list', 'GET', `${path}?${q}`);
      } catch (err) {
        // The continue token expired while paging: start the list over.
        if (err instanceof ApiError && err.status === 410 && cont) {
          cont = '';
          next.clear();
          continue;
        }
        throw err;
      }
      for (const item of page.items ?? []) {
        const stored = this.toStored(item);
        if (!stored) continue;
        const key = objectKey(stored.namespace, stored.name);
        next.set(key, this.merge(this.store.get(key), stored));
      }
      rv = page.metadata?.resourceVersion ?? '';
      cont = page.metadata?.continue ?? '';
    } while (cont);
    this.lists++;
    let changed = next.size !== this.store.size || this.absent;
    if (!changed) for (const [k, v] of next) if (this.store.get(k)?.doc !== v.doc) changed = true;
    if (this.absent) this.o.log.info('kind now served by the API server', { kind: this.kind.kind });
    this.absent = false;
    this.store = next;
    this.resourceVersion = rv;
    const first = !this.synced;
    this.markSynced();
    if (changed && !first) this.o.onChange();
  }

  private watch(): void {
    if (this.stopped) return;
    const params: Record<string, string> = {
      resourceVersion: this.resourceVersion,
      allowWatchBookmarks: 'true',
      // Spread the server-side timeouts so all watches do not restart together.
      timeoutSeconds: String(300 + Math.floor(Math.random() * 300)),
    };
    if (this.o.fieldSelector) params.fieldSelector = this.o.fieldSelector;
    let gone = false;
    let events = 0;
    this.watchHandle = this.o.client.watch(
      collectionPath(this.kind),
      params,
      (e: WatchEvent) => {
        events++;
        if (e.type === 'ERROR') {
          const code = (e.object as { code?: number }).code;
          if (code === 410) gone = true;
          else this.o.log.warn('watch error event', { kind: this.kind.kind, status: e.object });
          return;
        }
        this.backoffMs = this.o.minBackoffMs ?? 500;
        if (e.type === 'BOOKMARK') {
          const rv = (e.object.metadata as { resourceVersion?: string } | undefined)?.resourceVersion;
          if (rv) this.resourceVersion = rv;
          return;
        }
        this.apply(e.type, e.object, true);
      },
      (err) => {
        this.watchHandle = undefined;
        if (this.stopped) return;
        if (gone || (err instanceof ApiError && err.status === 410)) {
          this.o.log.info('watch version expired (410 Gone); listing again', { kind: this.kind.kind });
          this.resourceVersion = '';
          return void this.run();
        }
        if (err) return this.retry(err, 'watch');
        // Closed by the server's timeout: resume from the last version (a stream that closes
        // at once, again and again, backs off instead).
        if (events === 0) return this.retry(new Error('watch closed without events'), 'watch');
        this.watch();
      },
    );
  }

  private toStored(obj: Json): StoredObject | undefined {
    const meta = obj.metadata as Json | undefined;
    if (!meta || typeof meta.name !== 'string') return undefined;
    const { resourceVersion, ...restMeta } = withoutBookkeeping(meta);
    const { metadata: _meta, status, ...rest } = obj;
    const metaKey = JSON.stringify(restMeta);
    const doc: Json = { ...rest, apiVersion: apiVersionOf(this.kind), kind: this.kind.kind, metadata: restMeta };
    if (!this.kind.statusWritten && status !== undefined) doc.status = status;
    return {
      namespace: this.kind.namespaced ? (meta.namespace as string | undefined) : undefined,
      name: meta.name,
      resourceVersion: String(resourceVersion ?? ''),
      generation: typeof meta.generation === 'number' ? meta.generation : 1,
      doc: freezeDocument(doc),
      status: status ?? {},
      metaKey,
    };
  }

  private apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: Json, fromWatch: boolean): void {
    const rv = (obj.metadata as { resourceVersion?: string } | undefined)?.resourceVersion;
    if (rv && fromWatch) this.resourceVersion = rv;
    const stored = this.toStored(obj);
    if (!stored) return;
    // Timestamps of a change's way through the controller (bench:agent reads them).
    if (fromWatch) this.o.log.debug('watch event', { kind: this.kind.kind, type, namespace: stored.namespace, name: stored.name, resourceVersion: rv });
    const key = objectKey(stored.namespace, stored.name);
    const old = this.store.get(key);
    if (type === 'DELETED') {
      if (!old) return;
      this.store.delete(key);
      this.o.onChange();
      return;
    }
    // An answer read outside the watch for an object the store does not hold: it was deleted
    // meanwhile (a status write's answer that arrives after the DELETED event), or the watch has
    // not brought it yet and will. Storing it would bring a deleted object back until the next
    // list: its route stayed attached and served.
    if (!old && !fromWatch) return;
    if (old && old.resourceVersion === stored.resourceVersion) return;
    // An older version than the one stored (a status write's answer raced a later event).
    if (old && !fromWatch && Number(old.resourceVersion) > Number(stored.resourceVersion)) return;
    const next = this.merge(old, stored);
    this.store.set(key, next);
    // Also for an object read outside the watch: its event will come with this same version
    // and be no news then, so a changed document must wake the pipeline now.
    if (next.doc !== old?.doc) this.o.onChange();
  }

  /**
   * The entry to keep: the old one while the version is the same; the old document with the
   * new status when only the status changed (kinds whose status we write); else the new one.
   */
  private merge(old: StoredObject | undefined, stored: StoredObject): StoredObject {
    if (!old) return stored;
    if (old.resourceVersion === stored.resourceVersion) return old;
    if (this.kind.statusWritten && old.generation === stored.generation && old.metaKey === stored.metaKey && sameSpec(old.doc, stored.doc)) {
      return { ...old, resourceVersion: stored.resourceVersion, status: stored.status };
    }
    return stored;
  }
}

/** Same content apart from metadata (compared by metaKey): spec and other top-level fields. */
function sameSpec(a: unknown, b: unknown): boolean {
  const x = a as Json;
  const y = b as Json;
  const keys = Object.keys(x).filter((k) => k !== 'metadata');
  if (keys.length !== Object.keys(y).filter((k) => k !== 'metadata').length) return false;
  for (const k of keys) if (JSON.stringify(x[k]) !== JSON.stringify(y[k])) return false;
  return true;
}
