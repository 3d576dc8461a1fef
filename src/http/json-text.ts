/**
 * An answer body already serialised as JSON, written as it is by both servers (lean-response.ts,
 * koa-api.ts). check-login's verified answer is mostly the login result Redis kept as JSON:
 * parsing it only to serialise it again was a tenth of that request's web CPU.
 */
export class JsonText {
  constructor(readonly text: string) {}
}
