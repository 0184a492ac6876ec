import ValidatorSelector from '@fastify/ajv-compiler';
import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

/**
 * Fastify's own schema compilers (ajv for request validation, fast-json-stringify for responses),
 * each route's compiled on the route's first request instead of at startup.
 *
 * Why: the forge declares a request and a response schema for each of its ~450 operations, and
 * compiling all of them made `ready()` take ~4 s of CPU, paid by every start (the CLI, each
 * restart, every test suite's forge) although a process serves only some routes. Compiled code
 * and outputs are the ones Fastify would build at startup; only the time of compilation moves.
 * `eager` keeps Fastify's startup compilation (a test compiles every schema that way, so a
 * schema that does not compile still fails before it reaches a user).
 */
export function lazySchemaCompilers(eager = false): FastifyServerOptions['schemaController'] {
  if (eager) return undefined;
  const buildValidator = ValidatorSelector();
  const buildSerializer = SerializerSelector();
  // Fastify's types describe ajv's and fast-json-stringify's own function types; these wrappers
  // have the call signatures Fastify uses.
  const controller = {
    compilersFactory: {
      buildValidator(externalSchemas: unknown, ajvOptions: unknown) {
        const compile = (buildValidator as any)(externalSchemas, ajvOptions);
        return (routeSchema: unknown) => {
          let fn: ((data: unknown) => unknown) & { errors?: unknown };
          // Fastify reads the errors of a failed validation off the function it called.
          const lazy = Object.assign(
            (data: unknown) => {
              fn ??= compile(routeSchema);
              const result = fn(data);
              lazy.errors = fn.errors;
              return result;
            },
            { errors: undefined as unknown },
          );
          return lazy;
        };
      },
      buildSerializer(externalSchemas: unknown, serializerOptions: unknown) {
        const compile = (buildSerializer as any)(externalSchemas, serializerOptions);
        return (routeSchema: unknown) => {
          let fn: ((data: unknown) => string) | undefined;
          return (data: unknown) => (fn ??= compile(routeSchema))(data);
        };
      },
    },
  };
  return controller as unknown as FastifyServerOptions['schemaController'];
}
