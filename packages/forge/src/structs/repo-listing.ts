/** Query parameters of the repository listings, as Gitea's API document names and types them. */
import { Type } from 'typebox';
import { PageQuery, QueryBool, QueryInt64, QueryString } from './query.js';

/** `GET /repos/search`. */
export const RepoSearchQuerySchema = Type.Object({
  q: QueryString('keyword'),
  topic: QueryBool('Limit search to repositories with keyword as topic'),
  includeDesc: QueryBool('include search of keyword within repository description'),
  uid: QueryInt64('search only for repos that the user with the given id owns or contributes to'),
  priority_owner_id: QueryInt64('repo owner to prioritize in the results'),
  team_id: QueryInt64('search only for repos that belong to the given team id'),
  starredBy: QueryInt64('search only for repos that the user with the given id has starred'),
  private: QueryBool('include private repositories this user has access to (defaults to true)'),
  is_private: QueryBool('show only pubic, private or all repositories (defaults to all)'),
  template: QueryBool('include template repositories this user has access to (defaults to true)'),
  archived: QueryBool('show only archived, non-archived or all repositories (defaults to all)'),
  mode: QueryString(
    'type of repository to search for. Supported values are "fork", "source", "mirror" and "collaborative"',
  ),
  exclusive: QueryBool('if `uid` is given, search only for repos that the user owns'),
  sort: QueryString(
    'sort repos by attribute. Supported values are "alpha", "created", "updated", "size", "git_size", "lfs_size", "stars", "forks" and "id". Default is "alpha"',
  ),
  order: QueryString(
    'sort order, either "asc" (ascending) or "desc" (descending). Default is "asc", ignored if "sort" is not specified.',
  ),
  ...PageQuery,
});

/** The per-owner listings and `GET /user/repos`: only pagination. */
export const RepoListQuerySchema = Type.Object({ ...PageQuery });
