/**
 * Read-only manifest documents. A provider freezes every document it hands to the pipeline and
 * hands the same object again while the document is unchanged; the parse stages then remember
 * their outcome by object identity instead of re-validating (or even serialising) the document
 * on every reconcile. Freezing makes that safe: a document that could be edited in place could
 * not be remembered by identity.
 */

/** Frozen documents, and whether the walk that froze them found them free of cycles. */
const readOnly = new WeakMap<object, { acyclic: boolean }>();

/**
 * Freezes `doc` and everything inside it, and marks it as a document whose parse outcome may be
 * remembered. An object already frozen is taken as frozen all the way down. The same walk
 * notes whether it met any object twice (only a YAML alias does that; it may be a cycle): a
 * document without is known to serialise as JSON, so the parser need not serialise it to check.
 */
export function freezeDocument<T>(doc: T): T {
  return freeze(doc, undefined);
}

/**
 * freezeDocument for `doc` made of new objects over the parts of `base`, a document frozen
 * here (a provider adding metadata to a parsed document): base's parts are not walked again,
 * and `doc` is free of cycles when base is.
 */
export function freezeDerivedDocument<T>(doc: T, base: unknown): T {
  return freeze(doc, isKnownAcyclic(base));
}

interface Walk {
  acyclic: boolean;
  /** Objects found frozen already are parts of an acyclic document (freezeDerivedDocument). */
  frozenParts: boolean;
}

function freeze<T>(doc: T, frozenParts: boolean | undefined): T {
  if (typeof doc !== 'object' || doc === null || readOnly.has(doc)) return doc;
  const walk: Walk = { acyclic: true, frozenParts: frozenParts === true };
  deepFreeze(doc, walk);
  readOnly.set(doc, { acyclic: walk.acyclic });
  return doc;
}

function deepFreeze(value: object, walk: Walk): void {
  if (Object.isFrozen(value)) {
    // Reached twice in this walk (a cycle, or one object in two places through a YAML alias)
    // or frozen elsewhere: not known to be acyclic, so the parser serialises it to find out.
    if (!walk.frozenParts) walk.acyclic = false;
    return;
  }
  Object.freeze(value);
  if (Array.isArray(value)) {
    for (const item of value) if (typeof item === 'object' && item !== null) deepFreeze(item, walk);
  } else {
    for (const key of Object.keys(value)) {
      const item = (value as Record<string, unknown>)[key];
      if (typeof item === 'object' && item !== null) deepFreeze(item, walk);
    }
  }
}

/** True for documents marked by freezeDocument: their parse outcome cannot change. */
export function isReadOnlyDocument(doc: unknown): doc is object {
  return typeof doc === 'object' && doc !== null && readOnly.has(doc);
}

/**
 * True when freezeDocument walked all of `doc` and found no cycle: it serialises as JSON (a
 * document from YAML or JSON holds nothing else JSON cannot write). False means "not known".
 */
export function isKnownAcyclic(doc: unknown): boolean {
  return typeof doc === 'object' && doc !== null && readOnly.get(doc)?.acyclic === true;
}
