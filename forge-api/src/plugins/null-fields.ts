/**
 * Gitea decodes JSON bodies into Go structs, where `null` leaves a field at its zero value:
 * an optional field sent as null counts as not sent (`tea issues create` sends
 * `"due_date": null`). Top-level nulls are dropped before validation unless the route's schema
 * gives null a meaning of its own (a property whose type lists 'null').
 */
import type { FastifyInstance } from 'fastify';
import { shared } from './shared';

type Schema = { $ref?: string; type?: string | string[]; properties?: Record<string, Schema> };

function allowsNull(s: Schema | undefined): boolean {
  return Array.isArray(s?.type) ? s.type.includes('null') : s?.type === 'null';
}

async function nullFields(app: FastifyInstance) {
  const resolved = new WeakMap<object, Record<string, Schema>>();
  const propertiesOf = (body: Schema): Record<string, Schema> => {
    let props = resolved.get(body);
    if (!props) {
      const schema = body.$ref ? (app.getSchema(body.$ref.replace(/#$/, '')) as Schema | undefined) : body;
      props = schema?.properties ?? {};
      resolved.set(body, props);
    }
    return props;
  };

  app.addHook('preValidation', async (request) => {
    const body = request.body as Record<string, unknown> | null;
    if (!body || typeof body !== 'object' || Array.isArray(body)) return;
    const schema = request.routeOptions.schema?.body as Schema | undefined;
    const props = schema ? propertiesOf(schema) : {};
    for (const key of Object.keys(body)) if (body[key] === null && !allowsNull(props[key])) delete body[key];
  });
}

export default shared(nullFields);
