import { expect } from 'chai';
import { parseRoles } from '../../../src/auth/roles.js';

/** The roles kept on a user in Redis, read back for tokens and /profile (login.ts, sessions.ts). */
describe('roles as Redis keeps them, read back', function () {
  it('gives the strings of a JSON array, in order', function () {
    expect(parseRoles('["user","admin"]', ['user'])).to.deep.equal(['user', 'admin']);
    expect(parseRoles('[]', ['user'])).to.deep.equal([]);
  });

  it('drops entries that are not strings', function () {
    expect(parseRoles('["user",1,null,{"a":1},"ops"]', [])).to.deep.equal(['user', 'ops']);
  });

  it('gives the fallback for anything but an array, and for text that is not JSON', function () {
    expect(parseRoles('{"roles":["admin"]}', ['user'])).to.deep.equal(['user']);
    expect(parseRoles('"admin"', ['user'])).to.deep.equal(['user']);
    expect(parseRoles('[admin', ['user'])).to.deep.equal(['user']);
    expect(parseRoles('', [])).to.deep.equal([]);
  });

  it('reads a missing field as no roles', function () {
    expect(parseRoles(null, ['user'])).to.deep.equal([]);
    expect(parseRoles(undefined, ['user'])).to.deep.equal([]);
  });

  it('never hands out the fallback itself, so a caller changing its roles changes no one else', function () {
    const fallback = Object.freeze(['user']);
    const roles = parseRoles('not json', fallback);
    roles.push('admin');
    expect(fallback).to.deep.equal(['user']);
    expect(parseRoles('not json', fallback)).to.deep.equal(['user']);
  });
});
