/**
 * Rewrites a class compiled by TypeScript with private members down-levelled to WeakMaps
 * (`__classPrivateFieldGet(this, _X_field, "f")`, `__classPrivateFieldGet(this, _X_instances,
 * "m", _X_method)`) so that each member is an ordinary property or a plain function: what
 * patches/ioredis+6.0.0.patch holds for ioredis 6.0.0's RESP decoder, which pays a WeakMap or
 * WeakSet lookup for every field it reads and every method it calls (docs/benchmark.md, "ioredis's
 * reply decoder"). Behaviour is the same: nothing outside the class read those members.
 *
 * Regenerate after an ioredis upgrade (then check the patch still applies and the counts):
 *   node dist/scripts/patches/unprivate-fields.js node_modules/ioredis/built/resp/decoder.js
 *   npx patch-package ioredis
 *
 * Only accesses through `this` are rewritten; any other receiver (a static member read through
 * the class) keeps the helpers, which stay defined.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The top-level arguments of the call whose `(` is at `open`, and the index after its `)`. */
function callArguments(src: string, open: number): { args: string[]; end: number } {
  const args: string[] = [];
  let depth = 0;
  let start = open + 1;
  for (let i = open; i < src.length; i++) {
    const c = src[i]!;
    if (c === '"' || c === "'" || c === '`') {
      // skip a string literal (the helpers' kind arguments, and any literal inside an argument)
      for (i++; src[i] !== c; i++) if (src[i] === '\\') i++;
    } else if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      depth--;
      if (depth === 0) {
        args.push(src.slice(start, i).trim());
        return { args, end: i + 1 };
      }
    } else if (c === ',' && depth === 1) {
      args.push(src.slice(start, i).trim());
      start = i + 1;
    }
  }
  throw new Error(`unbalanced call at ${open}`);
}

/** The source with every private member reached through `this` made ordinary. */
export function unprivate(src: string): string {
  const call = /__classPrivateField(Get|Set)\(/g;
  let out = '';
  let at = 0;
  for (;;) {
    const m = call.exec(src);
    if (m === null) break;
    const { args, end } = callArguments(src, m.index + m[0].length - 1);
    out += src.slice(at, m.index);
    const [receiver, member] = args;
    const kind = m[1] === 'Get' ? args[2] : args[3];
    if (receiver !== 'this' || member === undefined) {
      out += src.slice(m.index, end);
    } else if (kind !== '"f"' && kind !== '"m"') {
      // accessors ("a") and static members would need another rewrite: refuse rather than guess
      throw new Error(`private member kind ${kind} of ${member} is not rewritten`);
    } else if (m[1] === 'Get') {
      // (this, _X_instances, "m", fn) → fn; (this, field, "f") → this.field
      out += args[2] === '"m"' ? args[3]! : `this.${member}`;
    } else {
      // (this, field, value, "f") → (this.field = value), itself rewritten
      out += `(this.${member} = ${unprivate(args[2]!)})`;
    }
    at = end;
    call.lastIndex = end;
  }
  out += src.slice(at);
  // the constructor's registrations: the instance in the WeakSet, each field in its WeakMap
  return out.replace(/\n[ \t]*_\w+_instances\.add\(this\);/g, '').replace(/\b(_\w+)\.set\(this, ([^;]*)\);/g, 'this.$1 = $2;');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = process.argv[2];
  if (file === undefined) {
    process.stderr.write('usage: node dist/scripts/patches/unprivate-fields.js <compiled module>\n');
    process.exit(2);
  }
  writeFileSync(file, unprivate(readFileSync(file, 'utf8')));
}
