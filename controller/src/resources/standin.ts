/**
 * Stand-ins for documents that fail their schema where dropping them would fail open: a
 * BackendTLSPolicy (its Services would be spoken to in plain text) or an IPAccessPolicy (its
 * targets would be served without the address lists). Files are read without the CRD's
 * validation, so such documents reach the controller. A kind that has a stand-in says so where
 * its parser lists it (resources/parse.ts KINDS, resources/policies POLICY_STAND_INS); the
 * stand-in carries the schema's message as `schemaProblem`, its document's `invalid` entry is
 * marked `standIn` (its status comes from the stand-in), and the stage that acts on the kind
 * makes its targets fail closed.
 */
import { UNKNOWN_CREATION_TIMESTAMP } from './metadata';
import type { ObjectMeta } from './types';

/**
 * Builds the stand-in for a document that failed with `problem`; undefined when nothing it
 * would act on can be read (no name, no target): the document is then only reported.
 */
export type StandIn<T> = (doc: Record<string, unknown>, problem: string) => T | undefined;

/** What every stand-in carries: the schema's message (field path and problem). */
export interface SchemaStandIn {
  /** Set only on a stand-in; its targets fail closed. */
  schemaProblem?: string;
}

export const looseString = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
export const looseObject = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/**
 * The metadata of a document that failed its schema, read leniently (what identifies the
 * stand-in, ranks it and carries its generation to status); undefined without a name.
 */
export function standInMeta(doc: Record<string, unknown>): ObjectMeta | undefined {
  const meta = looseObject(doc.metadata);
  const name = looseString(meta.name);
  if (!name) return undefined;
  const generation = typeof meta.generation === 'number' && Number.isInteger(meta.generation) && meta.generation >= 1 ? meta.generation : 1;
  const created = looseString(meta.creationTimestamp);
  return {
    name,
    namespace: looseString(meta.namespace) || 'default',
    generation,
    creationTimestamp: created && !Number.isNaN(Date.parse(created)) ? new Date(created).toISOString() : UNKNOWN_CREATION_TIMESTAMP,
    labels: {},
    annotations: {},
  };
}
