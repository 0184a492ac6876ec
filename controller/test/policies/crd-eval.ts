/**
 * A small evaluator for the parts of a structural OpenAPI v3 schema our CRDs use; the
 * x-kubernetes-validations rules run in a real CEL implementation (@bufbuild/cel, with the
 * strings extension Kubernetes enables too). It stands in for the API server until tests run
 * against one. Unknown fields are errors, as kubectl's default strict field validation makes them.
 */
import { isCelError, parse, run } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';

type Schema = Record<string, any>;

/** Functions Kubernetes CEL provides that our rules may use (core CEL + the strings library). */
const CEL_FUNCTIONS = new Set(['has', 'int', 'size', 'endsWith', 'substring', 'exists', 'all', 'exists_one']);

/** The function names a CEL rule calls (for "only functions Kubernetes CEL provides"). */
export function celFunctions(rule: string): string[] {
  return [...rule.matchAll(/([A-Za-z_]\w*)\s*\(/g)].map((m) => m[1]);
}

export function isKnownCelFunction(name: string): boolean {
  return CEL_FUNCTIONS.has(name);
}

/** JSON as the API server hands it to CEL: objects are maps, whole numbers are ints. */
function toCel(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toCel);
  if (typeof value === 'object' && value !== null) return new Map(Object.entries(value).map(([k, v]) => [k, toCel(v)]));
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
  return value;
}

/** Parse a rule with a real CEL implementation (throws on a syntax error) and return its evaluator. */
export function compileCel(rule: string): (self: unknown) => boolean {
  parse(rule);
  return (self) => {
    const result = run(rule, { self: toCel(self) as never }, { funcs: strings });
    // An evaluation error (no such key, bad int()) is a broken rule, not a verdict.
    if (isCelError(result)) throw new Error(`CEL rule failed to evaluate: ${rule}: ${String(result)}`);
    return result === true;
  };
}

/** Problems as `<path>: <what>`; [] = valid. */
export function validate(schema: Schema, value: unknown, path = ''): string[] {
  const at = (p: string) => (path ? `${path}${p.startsWith('[') ? '' : '.'}${p}` : p);
  const problems: string[] = [];
  switch (schema.type) {
    case 'object': {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return [`${path}: must be an object`];
      const obj = value as Record<string, unknown>;
      for (const req of schema.required ?? []) if (obj[req] === undefined) problems.push(`${at(req)}: Required value`);
      if (schema.properties) {
        for (const [k, v] of Object.entries(obj)) {
          if (v === undefined) continue;
          const sub = schema.properties[k];
          if (!sub) problems.push(`${at(k)}: unknown field`);
          else problems.push(...validate(sub, v, at(k)));
        }
      }
      break;
    }
    case 'array': {
      if (!Array.isArray(value)) return [`${path}: must be an array`];
      if (schema.minItems !== undefined && value.length < schema.minItems) problems.push(`${path}: should have at least ${schema.minItems} items`);
      if (schema.maxItems !== undefined && value.length > schema.maxItems) problems.push(`${path}: must have at most ${schema.maxItems} items`);
      value.forEach((item, i) => problems.push(...validate(schema.items, item, `${path}[${i}]`)));
      break;
    }
    case 'string': {
      if (typeof value !== 'string') return [`${path}: must be a string`];
      if (schema.minLength !== undefined && value.length < schema.minLength) problems.push(`${path}: too short`);
      if (schema.maxLength !== undefined && value.length > schema.maxLength) problems.push(`${path}: too long`);
      if (schema.pattern !== undefined && !new RegExp(schema.pattern).test(value)) problems.push(`${path}: must match ${schema.pattern}`);
      if (schema.enum && !schema.enum.includes(value)) problems.push(`${path}: Unsupported value`);
      break;
    }
    case 'integer': {
      if (typeof value !== 'number' || !Number.isInteger(value)) return [`${path}: must be an integer`];
      if (schema.minimum !== undefined && value < schema.minimum) problems.push(`${path}: should be greater than or equal to ${schema.minimum}`);
      if (schema.maximum !== undefined && value > schema.maximum) problems.push(`${path}: should be less than or equal to ${schema.maximum}`);
      break;
    }
    case 'boolean':
      if (typeof value !== 'boolean') return [`${path}: must be a boolean`];
      break;
    default:
      throw new Error(`schema type ${String(schema.type)} not supported at ${path}`);
  }
  // As the API server: CEL rules run only on values that passed the OpenAPI checks.
  if (problems.length === 0) {
    for (const v of schema['x-kubernetes-validations'] ?? []) {
      if (!compileCel(v.rule)(value)) problems.push(`${path}: ${v.message}`);
    }
  }
  return problems;
}
