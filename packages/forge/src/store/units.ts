/** Repository unit types and their API keys (Gitea `models/unit`). */
export const UNITS = [
  { type: 1, key: 'repo.code' },
  { type: 2, key: 'repo.issues' },
  { type: 3, key: 'repo.pulls' },
  { type: 4, key: 'repo.releases' },
  { type: 5, key: 'repo.wiki' },
  { type: 6, key: 'repo.ext_wiki' },
  { type: 7, key: 'repo.ext_issues' },
  { type: 8, key: 'repo.projects' },
  { type: 9, key: 'repo.packages' },
  { type: 10, key: 'repo.actions' },
] as const;
export const UnitType = {
  Code: 1,
  Issues: 2,
  PullRequests: 3,
  Releases: 4,
  Wiki: 5,
  ExternalWiki: 6,
  ExternalTracker: 7,
} as const;

const ACCESS_MODE_NAMES = ['none', 'read', 'write', 'admin', 'owner'] as const;

/** `AccessMode.ToString()`. */
export function accessModeName(mode: number): string {
  return ACCESS_MODE_NAMES[mode] ?? 'none';
}

/** `perm.ParseAccessMode`: unknown strings are `none`. */
export function parseAccessMode(name: string | undefined): number {
  const index = ACCESS_MODE_NAMES.indexOf((name ?? '') as (typeof ACCESS_MODE_NAMES)[number]);
  return index < 0 ? 0 : index;
}

/** Unit type for an API key, or undefined. */
export function unitTypeForKey(key: string): number | undefined {
  return UNITS.find((u) => u.key === key)?.type;
}

/** API key for a unit type. */
export function unitKeyForType(type: number): string {
  return UNITS.find((u) => u.type === type)?.key ?? `unit.${type}`;
}
