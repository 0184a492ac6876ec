/**
 * Policy documents out of the manifest stream: the valid ones typed, the invalid ones kept with
 * their document (their targetRefs name the ancestors that carry the error), plus a stand-in
 * among the typed ones for those of a kind that fails closed (POLICY_STAND_INS). Other
 * documents are not ours and are skipped silently here (parseManifests reports them).
 */
import type { ManifestDoc } from '../types';
import { isReadOnlyDocument } from '../readonly';
import { isPolicyGroup, isPolicyKind, parsePolicy, POLICY_KINDS, type Policy, type PolicyKind, type PolicyParseResult } from './index';

/** A policy document that failed its schema: it still gets status.ancestors (reason Invalid). */
export interface InvalidPolicy {
  kind: PolicyKind;
  namespace: string;
  name: string;
  generation: number;
  /** Field path + problem, from the schema. */
  message: string;
  /** The document as written; targetRefs are read from it leniently to name the ancestors. */
  doc: unknown;
  /**
   * Its stand-in is among the policies (resources/standin.ts): its status comes from there, and
   * its targets fail closed.
   */
  standIn?: boolean;
}


export interface ParsedPolicies {
  /** Valid policies, and the stand-ins of invalid ones (`schemaProblem` set). */
  policies: Policy[];
  invalid: InvalidPolicy[];
  /** Duplicates (same kind/namespace/name: the first wins) and unknown kinds of our group. */
  errors: { source: string; message: string }[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Schema outcomes of read-only documents (resources/readonly.ts), by document object: a
 * reconcile re-validates only the policies its provider handed out anew (zod is most of the cost
 * at thousands of policies). Parsed policies are shared between calls: read-only downstream.
 */
const outcomes = new WeakMap<object, PolicyParseResult>();

export function parsePolicyDocs(docs: ManifestDoc[]): ParsedPolicies {
  const out: ParsedPolicies = { policies: [], invalid: [], errors: [] };
  const seen = new Map<string, string>();
  const visit = (source: string, doc: unknown, readOnly = isReadOnlyDocument(doc)): void => {
    if (!isObject(doc)) return;
    if (doc.kind === 'List' && Array.isArray(doc.items)) {
      for (const item of doc.items) visit(source, item, readOnly);
      return;
    }
    const apiVersion = typeof doc.apiVersion === 'string' ? doc.apiVersion : '';
    const kind = typeof doc.kind === 'string' ? doc.kind : '';
    if (!isPolicyGroup(apiVersion)) return;
    if (!isPolicyKind(kind)) {
      out.errors.push({ source, message: `${apiVersion} has no kind ${kind || '(none)'}; policy kinds are ${POLICY_KINDS.join(', ')}` });
      return;
    }
    const meta = isObject(doc.metadata) ? doc.metadata : {};
    const name = typeof meta.name === 'string' && meta.name !== '' ? meta.name : undefined;
    if (!name) {
      out.errors.push({ source, message: `${kind} has no metadata.name` });
      return;
    }
    const namespace = typeof meta.namespace === 'string' && meta.namespace !== '' ? meta.namespace : 'default';
    const key = `${kind}/${namespace}/${name}`;
    const first = seen.get(key);
    if (first !== undefined) {
      out.errors.push({ source, message: `${kind} ${namespace}/${name} is already defined in ${first}; this copy is ignored` });
      return;
    }
    seen.set(key, source);
    let result = readOnly ? outcomes.get(doc) : undefined;
    if (!result) {
      result = parsePolicy(doc);
      if (readOnly) outcomes.set(doc, result);
    }
    if (result.ok) {
      out.policies.push(result.policy);
      return;
    }
    const generation = typeof meta.generation === 'number' && Number.isInteger(meta.generation) && meta.generation >= 1 ? meta.generation : 1;
    if (result.standIn) out.policies.push(result.standIn);
    out.invalid.push({ kind, namespace, name, generation, message: result.message, doc, ...(result.standIn ? { standIn: true } : {}) });
  };
  for (const d of docs) visit(d.source, d.doc);
  return out;
}
