import { type Static, Type } from 'typebox';

const VisibilityOption = Type.Union([
  Type.Literal(''),
  Type.Literal('public'),
  Type.Literal('limited'),
  Type.Literal('private'),
]);

/** Gitea's `Organization`. */
export const OrganizationSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  full_name: Type.String(),
  email: Type.String(),
  avatar_url: Type.String(),
  description: Type.String(),
  website: Type.String(),
  location: Type.String(),
  visibility: Type.String(),
  repo_admin_change_team_access: Type.Boolean(),
  username: Type.String(),
});
export type Organization = Static<typeof OrganizationSchema>;

/** `CreateOrgOption`. */
export const CreateOrgOptionSchema = Type.Object({
  username: Type.String({ minLength: 1, maxLength: 40 }),
  full_name: Type.Optional(Type.String({ maxLength: 100 })),
  email: Type.Optional(Type.String({ maxLength: 255 })),
  description: Type.Optional(Type.String({ maxLength: 255 })),
  website: Type.Optional(Type.String({ maxLength: 255 })),
  location: Type.Optional(Type.String({ maxLength: 50 })),
  visibility: Type.Optional(VisibilityOption),
  repo_admin_change_team_access: Type.Optional(Type.Boolean()),
});

/** `EditOrgOption`. */
export const EditOrgOptionSchema = Type.Object({
  full_name: Type.Optional(Type.String({ maxLength: 100 })),
  email: Type.Optional(Type.String({ maxLength: 255 })),
  description: Type.Optional(Type.String({ maxLength: 255 })),
  website: Type.Optional(Type.String({ maxLength: 255 })),
  location: Type.Optional(Type.String({ maxLength: 50 })),
  visibility: Type.Optional(VisibilityOption),
  repo_admin_change_team_access: Type.Optional(Type.Boolean()),
});

/** Gitea's `Team`; `organization` is null unless the endpoint loads it. */
export const TeamSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  description: Type.String(),
  organization: Type.Union([OrganizationSchema, Type.Null()]),
  includes_all_repositories: Type.Boolean(),
  permission: Type.String(),
  units: Type.Array(Type.String()),
  units_map: Type.Record(Type.String(), Type.String()),
  can_create_org_repo: Type.Boolean(),
});
export type Team = Static<typeof TeamSchema>;

/** `CreateTeamOption`. */
export const CreateTeamOptionSchema = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255, pattern: '^[-_.a-zA-Z0-9]+$' }),
  description: Type.Optional(Type.String({ maxLength: 255 })),
  includes_all_repositories: Type.Optional(Type.Boolean()),
  permission: Type.Optional(
    Type.Union([Type.Literal(''), Type.Literal('read'), Type.Literal('write'), Type.Literal('admin')]),
  ),
  units: Type.Optional(Type.Array(Type.String())),
  units_map: Type.Optional(Type.Record(Type.String(), Type.String())),
  can_create_org_repo: Type.Optional(Type.Boolean()),
});
