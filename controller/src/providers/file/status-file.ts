import { createHash } from 'crypto';
import * as path from 'path';
import { parseAllDocuments, stringify } from 'yaml';
import type { StatusReport } from '../../graph/types';
import { readIfExists, writeFileAtomic } from './atomic';

export const STATUS_FILE = 'status.yaml';

/** A status as the graph reports it. */
export type StatusEntry = StatusReport;

/** Looks up what the provider keeps about a resource (creationTimestamp) for the metadata. */
export type MetadataLookup = (entry: StatusEntry) => { creationTimestamp?: string; uid?: string } | undefined;

/** Kinds in the order a reader expects them: class, gateways, routes, the rest by name. */
const KIND_ORDER = ['GatewayClass', 'Gateway', 'HTTPRoute', 'GRPCRoute', 'TLSRoute', 'TCPRoute', 'UDPRoute'];

/**
 * Remembers each document's YAML: stringifying 1,000 route statuses takes longer than
 * everything else in a reconcile, and a change touches only a few of them. A status that is the
 * very object rendered last time (carryTransitionTimes hands unchanged reports back as they
 * were) costs nothing; another one with the same content costs a JSON comparison. The JSON is
 * kept as its digest: the text itself, one more copy of every status beside its YAML, was ~1 KB
 * per route (5 MB of the controller's heap at 5,000 routes).
 */
export type StatusYamlCache = Map<string, { entry: StatusEntry; creationTimestamp?: string; uid?: string; digest: string; yaml: string }>;

/** What a cached YAML was rendered from, by content. */
function digestOf(json: string): string {
  return createHash('sha256').update(json).digest('base64');
}

export function renderStatusYaml(entries: StatusEntry[], lookup: MetadataLookup, cache?: StatusYamlCache): string {
  const sorted = entries
    .map((entry) => {
      const i = KIND_ORDER.indexOf(entry.kind);
      return { entry, rank: i < 0 ? KIND_ORDER.length : i, key: `${entry.kind}/${entry.namespace ?? ''}/${entry.name}` };
    })
    .sort((a, b) => (a.rank !== b.rank ? a.rank - b.rank : a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  if (!sorted.length) return '';
  const seen = new Set<string>();
  const text = sorted
    .map(({ entry, key }) => {
      const known = lookup(entry);
      seen.add(key);
      const hit = cache?.get(key);
      if (hit && hit.entry === entry && hit.creationTimestamp === known?.creationTimestamp && hit.uid === known?.uid) return hit.yaml;
      const metadata: Record<string, unknown> = { name: entry.name };
      if (entry.namespace !== undefined) metadata.namespace = entry.namespace;
      metadata.generation = entry.generation;
      if (known?.creationTimestamp) metadata.creationTimestamp = known.creationTimestamp;
      if (known?.uid) metadata.uid = known.uid;
      const doc = { apiVersion: entry.apiVersion, kind: entry.kind, metadata, status: entry.status };
      const digest = cache ? digestOf(JSON.stringify(doc)) : '';
      const yaml = hit && hit.digest === digest ? hit.yaml : `---\n${stringify(doc, { lineWidth: 0, aliasDuplicateObjects: false })}`;
      cache?.set(key, { entry, creationTimestamp: known?.creationTimestamp, uid: known?.uid, digest, yaml });
      return yaml;
    })
    .join('');
  if (cache) for (const key of cache.keys()) if (!seen.has(key)) cache.delete(key);
  return text;
}

export async function writeStatusFile(stateDir: string, entries: StatusEntry[], lookup: MetadataLookup, cache?: StatusYamlCache): Promise<void> {
  // No fsync: status.yaml is rewritten after every reconcile, including the first one after a
  // restart; the rename alone keeps readers from seeing a partial file.
  await writeFileAtomic(path.join(stateDir, STATUS_FILE), renderStatusYaml(entries, lookup, cache), { fsync: false });
}

/**
 * The statuses written last time, so lastTransitionTime survives a restart. A damaged file
 * is not fatal: we lose only the old transition times.
 */
export async function readStatusFile(stateDir: string): Promise<{ entries: StatusEntry[]; error?: string }> {
  const text = await readIfExists(path.join(stateDir, STATUS_FILE));
  if (text === undefined) return { entries: [] };
  const entries: StatusEntry[] = [];
  for (const document of Array.from(parseAllDocuments(text))) {
    if (document.errors.length) return { entries: [], error: document.errors[0].message.split('\n')[0] };
    const value = document.toJS() as
      | { apiVersion?: string; kind?: string; metadata?: { name?: string; namespace?: string; generation?: number }; status?: Record<string, unknown> }
      | null;
    if (!value || typeof value.kind !== 'string' || typeof value.metadata?.name !== 'string') continue;
    entries.push({
      apiVersion: String(value.apiVersion ?? ''),
      kind: value.kind,
      namespace: value.metadata.namespace,
      name: value.metadata.name,
      generation: Number(value.metadata.generation ?? 0),
      status: value.status ?? {},
    });
  }
  return { entries };
}
