import { acceptedHostnames, hostnamesIntersect, moreSpecific } from '../src/graph';

describe('hostnames: listener hostname ∩ route hostnames (Gateway API rules)', () => {
  const cases: [string, string | undefined, string[], string[] | undefined][] = [
    ['neither sets a hostname: any host', undefined, [], []],
    ['listener without hostname takes the route hostnames', undefined, ['a.example.com', '*.b.com'], ['a.example.com', '*.b.com']],
    ['route without hostnames takes the listener hostname', 'test.example.com', [], ['test.example.com']],
    ['exact equal', 'test.example.com', ['test.example.com'], ['test.example.com']],
    ['route wildcard covers the listener hostname: narrowed to the listener', 'test.example.com', ['*.example.com'], ['test.example.com']],
    ['listener wildcard covers route hostnames of one or more labels', '*.example.com', ['test.example.com', 'foo.test.example.com'], ['test.example.com', 'foo.test.example.com']],
    ['listener wildcard does not cover the bare domain', '*.example.com', ['example.com'], undefined],
    ['non-matching route hostnames are ignored', '*.example.com', ['test.example.com', 'test.example.net'], ['test.example.com']],
    ['two wildcards: the one with more labels', '*.example.com', ['*.foo.example.com'], ['*.foo.example.com']],
    ['broader route wildcard is narrowed to the listener wildcard', '*.foo.example.com', ['*.example.com'], ['*.foo.example.com']],
    ['no intersection', 'a.example.com', ['b.example.com'], undefined],
    ['suffix without a label boundary does not match', '*.example.com', ['badexample.com'], undefined],
  ];
  test.each(cases)('%s', (_name, listener, route, expected) => {
    expect(acceptedHostnames(listener, route)).toEqual(expected);
  });

  test('intersection is symmetric for wildcards', () => {
    expect(hostnamesIntersect('*.example.com', 'a.example.com')).toBe(true);
    expect(hostnamesIntersect('a.example.com', '*.example.com')).toBe(true);
    expect(moreSpecific('*.example.com', 'a.example.com')).toBe('a.example.com');
  });
});
