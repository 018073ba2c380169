/** How a stored visibility number (users, organizations) is named on the API. */

/** Visibility names of the API (`public`, `limited`, `private`) to stored numbers. */
export const VISIBILITY_NAMES = ['public', 'limited', 'private'] as const;
export type VisibilityName = (typeof VISIBILITY_NAMES)[number];

/** Stored visibility number for an API name ('' means public). */
export function visibilityFromName(name: string | undefined): number {
  const index = VISIBILITY_NAMES.indexOf((name || 'public') as VisibilityName);
  return index < 0 ? 0 : index;
}

/** API name of a stored visibility. */
export function visibilityName(value: number): VisibilityName {
  return VISIBILITY_NAMES[value] ?? 'public';
}
