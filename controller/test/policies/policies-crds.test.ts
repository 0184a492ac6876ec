import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { parsePolicy } from '../../src/resources/policies';
import { POLICY_CRDS, renderCrd } from '../../src/resources/policies/crds';
import { MESSAGES } from '../../src/resources/policies/common';
import { celFunctions, compileCel, isKnownCelFunction, validate } from './crd-eval';
import { EXAMPLES } from './examples';

const DIR = join(__dirname, '../../../charts/portcullis/crds');
const files = Object.keys(POLICY_CRDS);
const crds = Object.fromEntries(files.map((f) => [f, parse(readFileSync(join(DIR, f), 'utf8'))]));
const byKind = Object.fromEntries(Object.values(crds).map((c) => [c.spec.names.kind, c]));

function crdProblems(doc: Record<string, unknown>): string[] {
  const crd = byKind[doc.kind as string];
  const version = crd.spec.versions.find((v: { name: string }) => `${crd.spec.group}/${v.name}` === doc.apiVersion);
  if (!version) return [`apiVersion ${String(doc.apiVersion)} not served`];
  // metadata is validated by the API server itself, not by the CRD schema.
  const { metadata: _m, ...rest } = doc;
  return validate(version.schema.openAPIV3Schema, { ...rest, metadata: {} });
}

function allRules(schema: any, out: { rule: string; message: string }[] = []): { rule: string; message: string }[] {
  if (schema && typeof schema === 'object') {
    for (const v of schema['x-kubernetes-validations'] ?? []) out.push(v);
    for (const value of Object.values(schema)) allRules(value, out);
  }
  return out;
}

describe('policy CRDs (charts/portcullis/crds)', () => {
  it.each(files)('%s is the generated YAML and a valid apiextensions.k8s.io/v1 CRD', (file) => {
    expect(readFileSync(join(DIR, file), 'utf8')).toBe(renderCrd(POLICY_CRDS[file]));
    const crd = crds[file];
    expect(crd).toMatchObject({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', spec: { group: 'gateway.portcullis.dev', scope: 'Namespaced' } });
    expect(crd.metadata.name).toBe(`${crd.spec.names.plural}.gateway.portcullis.dev`);
    const [version] = crd.spec.versions;
    expect(version).toMatchObject({ name: 'v1alpha1', served: true, storage: true, subresources: { status: {} } });
    expect(version.additionalPrinterColumns.map((c: { name: string }) => c.name)).toEqual(['Accepted', 'Age']);
    expect(version.schema.openAPIV3Schema.properties.status.properties.ancestors.maxItems).toBe(16);
  });

  it.each(EXAMPLES.filter((e) => e.crd !== false).map((e) => [e.name, e] as const))('agrees with zod: %s', (_n, example) => {
    const zodOk = parsePolicy(example.doc).ok;
    const problems = crdProblems(example.doc);
    expect({ valid: problems.length === 0, problems }).toEqual({ valid: example.valid, problems: example.valid ? [] : expect.any(Array) });
    expect(zodOk).toBe(example.valid);
    if (!example.valid && example.field) {
      // The CRD names the same field (or its parent object, for rules on an object).
      const paths = problems.map((p) => p.slice(0, p.indexOf(': ')));
      expect(paths.some((p) => p !== '' && (p.startsWith(example.field!) || example.field!.startsWith(p)))).toBe(true);
    }
  });

  it('a rule with a CEL syntax error is caught', () => {
    expect(() => compileCel("self.exists(t, t.kind == 'Gateway'")).toThrow();
  });

  it('CEL rules use only functions Kubernetes CEL provides and carry the same messages as zod', () => {
    const rules = Object.values(crds).flatMap((c) => allRules(c));
    expect(rules.length).toBeGreaterThanOrEqual(10);
    for (const { rule, message } of rules) {
      expect(celFunctions(rule).filter((f) => !isKnownCelFunction(f))).toEqual([]);
      expect(rule.split('(').length).toBe(rule.split(')').length);
      expect(typeof message).toBe('string');
      expect(() => compileCel(rule)).not.toThrow();
    }
    const messages = rules.map((r) => r.message);
    for (const m of [MESSAGES.mixedTargets, MESSAGES.duplicateTarget, MESSAGES.busyAboveBufferSize, MESSAGES.busyBelowBuffers, MESSAGES.zoneTooSmall]) {
      expect(messages).toContain(m);
    }
  });
});
