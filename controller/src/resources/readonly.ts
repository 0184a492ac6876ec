/**
 * Read-only manifest documents. A provider freezes every document it hands to the pipeline and
 * hands the same object again while the document is unchanged; the parse stages then remember
 * their outcome by object identity instead of re-validating (or even serialising) the document
 * on every reconcile. Freezing makes that safe: a document that could be edited in place could
 * not be remembered by identity.
 */

const readOnly = new WeakSet<object>();

/**
 * Freezes `doc` and everything inside it, and marks it as a document whose parse outcome may be
 * remembered. Objects already frozen are taken as frozen all the way down (this function froze
 * them), so re-wrapping a frozen document in a new top-level object costs only that object.
 * Cycles (YAML aliases can make them) end at the first frozen object.
 */
export function freezeDocument<T>(doc: T): T {
  deepFreeze(doc);
  if (typeof doc === 'object' && doc !== null) readOnly.add(doc);
  return doc;
}

function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  if (Array.isArray(value)) {
    for (const item of value) deepFreeze(item);
    return;
  }
  for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
}

/** True for documents marked by freezeDocument: their parse outcome cannot change. */
export function isReadOnlyDocument(doc: unknown): doc is object {
  return typeof doc === 'object' && doc !== null && readOnly.has(doc);
}
