/** Ids the forge hands out, read from request text or numbers. */
/**
 * Largest id or offset the forge uses: the columns are int64 on both databases, and ids are
 * JavaScript numbers (exact up to 2^53); no row ever gets an id beyond it.
 */
export const MAX_DB_INT = Number.MAX_SAFE_INTEGER;

/** An id from the request, or -1 (matches nothing) when no row can have it. */
export function dbId(n: number | undefined): number | undefined {
  if (n === undefined) return undefined;
  return Number.isSafeInteger(n) && n >= 0 && n <= MAX_DB_INT ? n : -1;
}

/**
 * A decimal id written as text (`/milestones/{id-or-name}`, `?labels=3,bug`), or undefined
 * when the text is not one; ids beyond the ones the forge hands out become -1 (no row),
 * never a number the driver refuses.
 */
export function idFromText(text: string): number | undefined {
  if (!/^\d+$/.test(text)) return undefined;
  return dbId(Number(text));
}
