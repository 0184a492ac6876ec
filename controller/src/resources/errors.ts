import type { z } from 'zod';

/** `spec.rules[0].matches[1].path.type` from a zod issue path. */
export function fieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}

/** One line per problem, each naming the field: `spec.listeners[0].port: Too big: ...`. */
export function formatIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const where = fieldPath(issue.path);
      return where ? `${where}: ${issue.message}` : issue.message;
    })
    .join('; ');
}
