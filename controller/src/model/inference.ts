/**
 * What nginx tells the inference hop about a pool, in one request header
 * (X-Portcullis-Inference): `pool=<ns>/<name>;mode=<FailOpen|FailClose>;picker=<p>;endpoints=<list>[;proto=h2c]`
 * where <p> is `builtin` or the picker's ready `ip:port` addresses (comma-separated, empty when
 * none is ready) and <list> the pool's ready `ip:port` endpoints. The hop is stateless: each
 * request carries what it needs, and a change reaches it with the config reload that carries it.
 */
import type { InferenceBackend } from '../graph/types';

export const INFERENCE_HEADER = 'X-Portcullis-Inference';

export function inferencePoolValue(b: InferenceBackend): string {
  const picker = b.picker.kind === 'builtin' ? 'builtin' : b.picker.addresses.join(',');
  return `pool=${b.pool};mode=${b.failureMode};picker=${picker};endpoints=${b.endpoints.join(',')}${b.appProtocol === 'kubernetes.io/h2c' ? ';proto=h2c' : ''}`;
}

export interface InferencePoolSpec {
  pool: string;
  failureMode: 'FailOpen' | 'FailClose';
  /** 'builtin', or the picker's addresses ([] = no ready picker). */
  picker: 'builtin' | string[];
  endpoints: string[];
  /** The pods speak HTTP/2 without TLS (appProtocol kubernetes.io/h2c). */
  h2c: boolean;
}

/** The hop's reading of the header (undefined: not one of ours). */
export function parseInferencePoolValue(value: string): InferencePoolSpec | undefined {
  const fields = new Map<string, string>();
  for (const part of value.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) fields.set(part.slice(0, eq), part.slice(eq + 1));
  }
  const pool = fields.get('pool');
  const mode = fields.get('mode');
  const picker = fields.get('picker');
  if (!pool || (mode !== 'FailOpen' && mode !== 'FailClose') || picker === undefined) return undefined;
  const list = (s: string | undefined) => (s ? s.split(',').filter(Boolean) : []);
  return { pool, failureMode: mode, picker: picker === 'builtin' ? 'builtin' : list(picker), endpoints: list(fields.get('endpoints')), h2c: fields.get('proto') === 'h2c' };
}
