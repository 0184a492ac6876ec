import type { StatusReport } from '../src/graph';
import { carryTransitionTimes } from '../src/status';

const T1 = '2026-01-01T00:00:00Z';
const T2 = '2026-01-01T00:05:00Z';

const cond = (type: string, status: string, reason = type, message = '') => ({ type, status, reason, message, observedGeneration: 1 });

const gw = (accepted: string, listeners: { name: string; programmed: string }[]): StatusReport => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'Gateway',
  namespace: 'default',
  name: 'gw',
  generation: 1,
  status: {
    addresses: [{ type: 'IPAddress', value: '127.0.0.1' }],
    conditions: [cond('Accepted', accepted), cond('Programmed', 'True')],
    listeners: listeners.map((l) => ({ name: l.name, attachedRoutes: 0, supportedKinds: [], conditions: [cond('Programmed', l.programmed)] })),
  },
});

const times = (r: StatusReport, path: (s: any) => any[]) => path(r.status).map((c: { lastTransitionTime: string }) => c.lastTransitionTime); // eslint-disable-line @typescript-eslint/no-explicit-any

describe('transitions: lastTransitionTime changes only when a condition\'s status changes', () => {
  test('first report: every condition gets now', () => {
    const [r] = carryTransitionTimes([], [gw('True', [{ name: 'a', programmed: 'True' }])], T1);
    expect(times(r, (s) => s.conditions)).toEqual([T1, T1]);
    expect(times(r, (s) => s.listeners[0].conditions)).toEqual([T1]);
  });

  test('same status again: time kept, even when reason and message change', () => {
    const [first] = carryTransitionTimes([], [gw('True', [{ name: 'a', programmed: 'True' }])], T1);
    const next = gw('True', [{ name: 'a', programmed: 'True' }]);
    (next.status.conditions as ReturnType<typeof cond>[])[0] = cond('Accepted', 'True', 'ListenersNotValid', 'other words');
    const [second] = carryTransitionTimes([first], [next], T2);
    expect(times(second, (s) => s.conditions)).toEqual([T1, T1]);
  });

  test('status flips: only that condition gets the new time', () => {
    const [first] = carryTransitionTimes([], [gw('True', [{ name: 'a', programmed: 'True' }])], T1);
    const [second] = carryTransitionTimes([first], [gw('False', [{ name: 'a', programmed: 'True' }])], T2);
    expect(times(second, (s) => s.conditions)).toEqual([T2, T1]);
  });

  test('listeners are matched by name, not position', () => {
    const [first] = carryTransitionTimes([], [gw('True', [{ name: 'a', programmed: 'True' }, { name: 'b', programmed: 'False' }])], T1);
    const [second] = carryTransitionTimes([first], [gw('True', [{ name: 'b', programmed: 'False' }, { name: 'new', programmed: 'True' }])], T2);
    expect(times(second, (s) => s.listeners[0].conditions)).toEqual([T1]);
    expect(times(second, (s) => s.listeners[1].conditions)).toEqual([T2]);
  });

  test('route parents are matched by parentRef', () => {
    const route = (refs: string[]): StatusReport => ({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      namespace: 'default',
      name: 'r',
      generation: 1,
      status: { parents: refs.map((name) => ({ parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'default', name }, controllerName: 'c', conditions: [cond('Accepted', 'True')] })) },
    });
    const [first] = carryTransitionTimes([], [route(['one'])], T1);
    const [second] = carryTransitionTimes([first], [route(['two', 'one'])], T2);
    expect(times(second, (s) => s.parents[0].conditions)).toEqual([T2]);
    expect(times(second, (s) => s.parents[1].conditions)).toEqual([T1]);
  });

  test('parentRef identity ignores key order (previous statuses may come back from YAML)', () => {
    const report = (parentRef: object): StatusReport => ({ apiVersion: 'v1', kind: 'HTTPRoute', namespace: 'default', name: 'r', generation: 1, status: { parents: [{ parentRef, controllerName: 'c', conditions: [cond('Accepted', 'True')] }] } });
    const [first] = carryTransitionTimes([], [report({ name: 'gw', namespace: 'default', kind: 'Gateway', group: 'g' })], T1);
    const [second] = carryTransitionTimes([first], [report({ group: 'g', kind: 'Gateway', namespace: 'default', name: 'gw' })], T2);
    expect(times(second, (s) => s.parents[0].conditions)).toEqual([T1]);
  });

  test('another resource with the same name but another kind does not lend its times', () => {
    const [first] = carryTransitionTimes([], [gw('True', [])], T1);
    const other = { ...gw('True', []), kind: 'GatewayLike' };
    const [second] = carryTransitionTimes([first], [other], T2);
    expect(times(second, (s) => s.conditions)).toEqual([T2, T2]);
  });

  test('inputs are not mutated', () => {
    const next = gw('True', []);
    carryTransitionTimes([], [next], T1);
    expect((next.status.conditions as object[])[0]).not.toHaveProperty('lastTransitionTime');
  });
});

describe('transitions over many reconciles', () => {
  const T3 = '2026-01-01T00:10:00Z';
  const T4 = '2026-01-01T00:15:00Z';

  test('an unchanged report keeps its times run after run, and a later flip still gets the new time', () => {
    const [a] = carryTransitionTimes([], [gw('True', [{ name: 'a', programmed: 'True' }])], T1);
    const [b] = carryTransitionTimes([a], [gw('True', [{ name: 'a', programmed: 'True' }])], T2);
    const [c] = carryTransitionTimes([b], [gw('True', [{ name: 'a', programmed: 'True' }])], T3);
    expect(c).toEqual(a);
    const [d] = carryTransitionTimes([c], [gw('True', [{ name: 'a', programmed: 'False' }])], T4);
    expect(times(d, (s) => s.conditions)).toEqual([T1, T1]);
    expect(times(d, (s) => s.listeners[0].conditions)).toEqual([T4]);
  });

  test('two listeners with one name: each run carries from the same previous element, as the first run did', () => {
    const twice = (second: string) => gw('True', [{ name: 'a', programmed: 'True' }, { name: 'a', programmed: second }]);
    const [a] = carryTransitionTimes([], [twice('True')], T1);
    const [b] = carryTransitionTimes([a], [twice('False')], T2);
    // Both listeners are matched to the last "a" of the previous run (Programmed True, T1).
    expect([times(b, (s) => s.listeners[0].conditions), times(b, (s) => s.listeners[1].conditions)]).toEqual([[T1], [T2]]);
    // The same input again: the first "a" now meets the second's False and takes a new time.
    const [c] = carryTransitionTimes([b], [twice('False')], T3);
    expect([times(c, (s) => s.listeners[0].conditions), times(c, (s) => s.listeners[1].conditions)]).toEqual([[T3], [T2]]);
  });
});
