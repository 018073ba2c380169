import { describe, expect, it } from 'vitest';
import {
  compileTagPattern,
  InvalidTagPatternError,
  isUserAllowedToControlTag,
} from '../src/services/protected-tag-rules.js';

describe('protected tag patterns (Gitea glob and /regex/)', () => {
  const cases: Array<[pattern: string, name: string, matches: boolean]> = [
    ['v*', 'v1.0', true],
    ['v*', 'release/v1', false],
    ['*', 'release/v1', true], // no separators: * crosses "/"
    ['v?.0', 'v1.0', true],
    ['v?.0', 'v10.0', false],
    ['v[0-9].*', 'v3.1', true],
    ['v[!0-9]*', 'v3', false],
    ['{alpha,beta}-*', 'beta-2', true],
    ['{alpha,beta}-*', 'gamma-2', false],
    ['v1.0', 'v1.0', true],
    ['v1.0', 'v1x0', false], // "." is literal in a glob
    ['\\*', '*', true],
    ['/v1/', 'xv1y', true], // regex is unanchored like Go's MatchString
    ['/^v[0-9]+$/', 'v12', true],
    ['/^v[0-9]+$/', 'v12b', false],
    ['//', 'anything', true],
  ];
  for (const [pattern, name, matches] of cases) {
    it(`${JSON.stringify(pattern)} ${matches ? 'matches' : 'does not match'} ${JSON.stringify(name)}`, () => {
      expect(compileTagPattern(pattern)(name)).toBe(matches);
    });
  }

  it('rejects patterns that do not compile', () => {
    expect(() => compileTagPattern('/(/')).toThrow(InvalidTagPatternError);
    expect(() => compileTagPattern('{a,b')).toThrow(InvalidTagPatternError);
    expect(() => compileTagPattern('[abc')).toThrow(InvalidTagPatternError);
  });
});

describe('isUserAllowedToControlTag', () => {
  const rules = [
    { namePattern: 'v*', allowlistUserIds: [1], allowlistTeamIds: [] },
    { namePattern: '/^v2/', allowlistUserIds: [], allowlistTeamIds: [7] },
  ];
  it('allows anyone when no protection matches', () => {
    expect(isUserAllowedToControlTag(rules, 'nightly', { id: 9, teamIds: [] })).toBe(true);
  });
  it('allows an allowlisted user', () => {
    expect(isUserAllowedToControlTag(rules, 'v1', { id: 1, teamIds: [] })).toBe(true);
  });
  it('denies a user no matching protection allows', () => {
    expect(isUserAllowedToControlTag(rules, 'v1', { id: 9, teamIds: [7] })).toBe(false);
  });
  it('allows through any matching protection, here a team allowlist', () => {
    expect(isUserAllowedToControlTag(rules, 'v2.0', { id: 9, teamIds: [7] })).toBe(true);
    expect(isUserAllowedToControlTag(rules, 'v2.0', { id: 9, teamIds: [8] })).toBe(false);
  });
});
