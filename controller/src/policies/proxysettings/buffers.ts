/**
 * Proxy buffering: per-field merge (route over Gateway) and the checks nginx makes when it
 * loads a location's proxy settings (ngx_http_proxy_merge_loc_conf), run on the merged values
 * with nginx's defaults for what no policy sets. A failing location would make the whole reload
 * fail, so it never reaches nginx.
 */
import { describeBytes, sizeBytes } from '../../resources/policies';
import type { LocationProxySettings } from '../types';

export const DEFAULT_PAGE_SIZE = 4096;
/** proxy_max_temp_file_size default (1024m): nginx wants it >= max(buffer_size, one buffer). */
const MAX_TEMP_FILE_SIZE = 1024 * 1024 * 1024;

const FIELDS = ['buffering', 'bufferSize', 'buffers', 'busyBuffersSize'] as const;

/** Route fields override Gateway fields one by one; unset fields inherit. */
export function mergeProxy(gateway: LocationProxySettings | undefined, route: LocationProxySettings | undefined): LocationProxySettings | undefined {
  if (!gateway) return route;
  if (!route) return gateway;
  const out: LocationProxySettings = {};
  for (const f of FIELDS) {
    const v = route[f] ?? gateway[f];
    if (v !== undefined) (out as Record<string, unknown>)[f] = v;
  }
  return out;
}

export interface ProxyProblem {
  /** What nginx would refuse, with the values in force. */
  problem: string;
  /** How to make it valid. */
  fix: string;
}

/**
 * The problem nginx would report for these settings (as one location's complete set, unset
 * fields at nginx's defaults), or undefined when nginx accepts them.
 */
export function checkProxySettings(s: LocationProxySettings, pageSize = DEFAULT_PAGE_SIZE): ProxyProblem | undefined {
  const bufferSize = s.bufferSize !== undefined ? sizeBytes(s.bufferSize) : pageSize;
  const number = s.buffers?.number ?? 8;
  const one = s.buffers !== undefined ? sizeBytes(s.buffers.size) : pageSize;
  const larger = Math.max(bufferSize, one);
  const busy = s.busyBuffersSize !== undefined ? sizeBytes(s.busyBuffersSize) : 2 * larger;
  const max = (number - 1) * one;
  // Built only when something is wrong: this runs for every route location.
  const values = () =>
    `bufferSize ${s.bufferSize ?? `${describeBytes(bufferSize)} (nginx default)`}, ` +
    `buffers ${s.buffers ? `${number} x ${s.buffers.size}` : `${number} x ${describeBytes(one)} (nginx default)`}, ` +
    `busyBuffersSize ${s.busyBuffersSize ?? `${describeBytes(busy)} (nginx default: twice the larger of bufferSize and buffers.size)`}`;

  if (larger > MAX_TEMP_FILE_SIZE) {
    return { problem: `with ${values()}: a buffer larger than 1024m exceeds nginx's proxy_max_temp_file_size`, fix: 'use bufferSize and buffers.size of at most 1024m' };
  }
  const range =
    larger < max
      ? `set busyBuffersSize between ${describeBytes(larger)} and ${describeBytes(max)}`
      : larger === max
      ? `set busyBuffersSize to ${describeBytes(max)}, or raise buffers.number`
      : `raise buffers.number or buffers.size so that (number - 1) x size is at least ${describeBytes(larger)}, or lower bufferSize`;
  if (busy < larger) {
    return { problem: `with ${values()}: busyBuffersSize must be at least the larger of bufferSize and buffers.size (${describeBytes(larger)})`, fix: range };
  }
  if (busy > max) {
    return { problem: `with ${values()}: busyBuffersSize must not exceed the size of all buffers minus one buffer (${describeBytes(max)})`, fix: range };
  }
  return undefined;
}
