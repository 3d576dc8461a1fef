import type { Ajv } from 'ajv';
import { expect } from 'chai';
import type { JsonResponse } from '../helpers/http.js';

/** The served document, as far as the answer checks read it. */
export interface ServedDoc {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema?: unknown }> }> }>>;
}

/** A JSON pointer segment. */
export const pointer = (s: string): string => s.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * An answer the document gives for the operation: its status is documented, its content type is
 * one the document gives for that status, and a body with a schema validates against it. `ajv`
 * holds the document as `doc`.
 */
export function expectDocumented(
  ajv: Ajv,
  served: ServedDoc,
  method: string,
  path: string,
  res: JsonResponse<unknown>,
  what = `${method.toUpperCase()} ${path} ${res.status}`,
): void {
  const documented = served.paths[path]?.[method]?.responses[String(res.status)];
  expect(documented, `${what}: the document lists no such answer\n${res.text.slice(0, 300)}`).to.exist;
  const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
  expect(documented!.content ?? {}, `${what}: content type`).to.have.property(type);
  if (documented!.content![type]!.schema !== undefined) {
    const ref = `doc#/paths/${pointer(path)}/${method}/responses/${res.status}/content/${pointer(type)}/schema`;
    const validate = ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
    expect(validate(JSON.parse(res.text)), `${what}: ${ajv.errorsText(validate.errors)}\n${res.text.slice(0, 300)}`).to.equal(true);
  }
}
