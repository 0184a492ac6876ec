import { promises as fs } from 'fs';
import * as path from 'path';
import { parseAllDocuments } from 'yaml';
import { eventually } from './http';

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  observedGeneration: number;
  lastTransitionTime: string;
}

export interface StatusDoc {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; generation: number; creationTimestamp: string };
  status: any;
}

/** The documents of <stateDir>/status.yaml ([] when it does not exist yet). */
export async function readStatus(stateDir: string): Promise<StatusDoc[]> {
  let text: string;
  try {
    text = await fs.readFile(path.join(stateDir, 'status.yaml'), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return Array.from(parseAllDocuments(text))
    .map((d) => d.toJS() as StatusDoc)
    .filter((d) => d && d.kind);
}

export function findStatus(docs: StatusDoc[], kind: string, name: string, namespace?: string): StatusDoc | undefined {
  return docs.find(
    (d) => d.kind === kind && d.metadata.name === name && (namespace === undefined || (d.metadata.namespace ?? 'default') === namespace),
  );
}

export function condition(conditions: Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** The status.parents[] entry of a route for a Gateway (and listener when given). */
export function routeParent(doc: StatusDoc | undefined, gateway: string, sectionName?: string): any {
  return doc?.status?.parents?.find(
    (p: any) => p.parentRef?.name === gateway && (sectionName === undefined || p.parentRef?.sectionName === sectionName),
  );
}

/** Waits until status.yaml holds a document for which `check` is true; returns all documents. */
export async function waitForStatus(
  stateDir: string,
  check: (docs: StatusDoc[]) => boolean,
  timeoutMs = 15000,
): Promise<StatusDoc[]> {
  return eventually(() => readStatus(stateDir), check, timeoutMs, 50);
}

/** True when kind/name has a condition `type` with `status` (and `reason` if given). */
export function hasCondition(
  docs: StatusDoc[],
  kind: string,
  name: string,
  type: string,
  status: string,
  reason?: string,
): boolean {
  const doc = findStatus(docs, kind, name);
  const c = condition(doc?.status?.conditions, type);
  return !!c && c.status === status && (reason === undefined || c.reason === reason);
}
