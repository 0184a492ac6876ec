/**
 * Envoy's ext_proc messages as the endpoint-picker protocol uses them: the service definition
 * (from ext_proc.proto, our subset of the public API) and typed views of its messages.
 */
import * as path from 'path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

export const PROCESS_METHOD = '/envoy.service.ext_proc.v3.ExternalProcessor/Process';
/** The header (and envoy.lb metadata key) naming the chosen endpoint(s): `ip:port[,ip:port...]`. */
export const DESTINATION_HEADER = 'x-gateway-destination-endpoint';
/** Conformance steering: restricts the candidates to these `ip` or `ip:port` values. */
export const TEST_SELECTION_HEADER = 'test-epp-endpoint-selection';
export const LB_METADATA_NAMESPACE = 'envoy.lb';
/** The envoy.lb metadata key (sent with the response headers) naming the endpoint that served the request. */
export const SERVED_ENDPOINT_KEY = 'x-gateway-destination-endpoint-served';

export interface HeaderValue {
  key: string;
  value?: string;
  raw_value?: Buffer;
}
export interface HeaderMutation {
  set_headers?: { header?: HeaderValue; append_action?: number }[];
  remove_headers?: string[];
}
export interface CommonResponse {
  status?: number;
  header_mutation?: HeaderMutation;
  body_mutation?: { body?: Buffer; clear_body?: boolean; streamed_response?: { body?: Buffer; end_of_stream?: boolean } };
  clear_route_cache?: boolean;
}
/** Envoy's ProcessingMode: HeaderSendMode 0 DEFAULT, 1 SEND, 2 SKIP; BodySendMode 0 NONE, 1 STREAMED, 2 BUFFERED, 3 BUFFERED_PARTIAL, 4 FULL_DUPLEX_STREAMED. */
export interface ProcessingMode {
  request_header_mode?: number;
  response_header_mode?: number;
  request_body_mode?: number;
  response_body_mode?: number;
  request_trailer_mode?: number;
  response_trailer_mode?: number;
}
export interface ImmediateResponse {
  status?: { code?: number };
  headers?: HeaderMutation;
  body?: Buffer;
  details?: string;
}
/** google.protobuf.Struct as proto-loader hands it over (objects: true). */
export interface Struct {
  fields?: Record<string, StructValue>;
}
export interface StructValue {
  stringValue?: string;
  structValue?: Struct;
  listValue?: { values?: StructValue[] };
  kind?: string;
}

export interface ProcessingRequest {
  request_headers?: { headers?: { headers?: HeaderValue[] }; end_of_stream?: boolean };
  request_body?: { body?: Buffer; end_of_stream?: boolean };
  response_headers?: { headers?: { headers?: HeaderValue[] }; end_of_stream?: boolean };
  response_body?: { body?: Buffer; end_of_stream?: boolean };
  response_trailers?: { trailers?: { headers?: HeaderValue[] } };
  metadata_context?: { filter_metadata?: Record<string, Struct> };
  request?: string;
}
export interface ProcessingResponse {
  request_headers?: { response?: CommonResponse };
  response_headers?: { response?: CommonResponse };
  request_body?: { response?: CommonResponse };
  response_body?: { response?: CommonResponse };
  response_trailers?: { header_mutation?: HeaderMutation };
  immediate_response?: ImmediateResponse;
  dynamic_metadata?: Struct;
  mode_override?: ProcessingMode;
  response?: string;
}

let definition: grpc.ServiceDefinition | undefined;

/** The ExternalProcessor service definition (serializers for both sides). */
export function externalProcessorService(): grpc.ServiceDefinition {
  if (definition) return definition;
  const pkg = protoLoader.loadSync(path.join(__dirname, 'ext_proc.proto'), {
    keepCase: true,
    longs: String,
    enums: Number,
    defaults: false,
    oneofs: true,
  });
  definition = pkg['envoy.service.ext_proc.v3.ExternalProcessor'] as grpc.ServiceDefinition;
  return definition;
}

/** A header's value, whichever of value / raw_value the sender used. */
export function headerText(h: HeaderValue): string {
  if (h.raw_value && h.raw_value.length > 0) return Buffer.from(h.raw_value).toString('latin1');
  return h.value ?? '';
}

export function headerOption(key: string, value: string): { header: HeaderValue; append_action: number } {
  // 2 = OVERWRITE_IF_EXISTS_OR_ADD: the picker's value replaces the client's.
  return { header: { key, raw_value: Buffer.from(value, 'latin1') }, append_action: 2 };
}

/** A string field of a Struct, at `namespace` / `key` (filter metadata or dynamic metadata). */
export function structString(s: Struct | undefined, namespace: string, key: string): string | undefined {
  const inner = s?.fields?.[namespace]?.structValue;
  const v = inner?.fields?.[key];
  if (!v) return undefined;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.listValue) return (v.listValue.values ?? []).map((x) => x.stringValue ?? '').filter(Boolean).join(',');
  return undefined;
}

/** { namespace: { key: value } } as a Struct. */
export function nestedStruct(namespace: string, key: string, value: string): Struct {
  return { fields: { [namespace]: { structValue: { fields: { [key]: { stringValue: value } } } } } };
}
