/**
 * How far the controller's JavaScript heap may grow past what is live before V8 collects it.
 *
 * Every reconcile builds a new graph, model and config while the previous ones are still held,
 * so the controller allocates tens of megabytes per run and keeps a steady ~100-150 MB live at
 * 5,000 routes. With such a fast-allocating program and a machine with gigabytes of memory, V8
 * lets the old generation grow to up to 4x what survived the last full collection before it
 * collects again (its heap growing factor), and keeps the pages it committed: measured at 5,180
 * routes on Kubernetes, 128 MB live in a 455 MB heap and 551 MB of RSS. A fixed factor of
 * 1 + HEAP_GROWING_PERCENT/100 keeps the heap within that of the live data, for more frequent
 * (incremental, mostly concurrent) collections.
 *
 * Set at run time rather than as a node option, so that one place covers every way the
 * controller starts (bin/ under tsx, the image's bundle, the chart, the e2e suites and benches):
 * V8 reads this flag each time it sets the next collection's limit. The documented
 * --max-old-space-size lowers the factor too, but only as a hard cap given at start, which
 * would turn a larger cluster into an out-of-memory crash.
 */
import * as v8 from 'node:v8';

/** Heap limit = live after a full collection x 1.5 (V8 picks 1.1-4 by allocation speed). */
export const HEAP_GROWING_PERCENT = 50;

export function limitHeapGrowth(percent = HEAP_GROWING_PERCENT): void {
  v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
}
