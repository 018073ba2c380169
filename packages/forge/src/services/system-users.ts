import { type UserRow, Visibility } from '../store/schema.js';

/** Id of the Ghost user that stands in for deleted users. */
export const GHOST_USER_ID = -1;
/** Id of the Actions bot user. */
export const ACTIONS_USER_ID = -2;

const blank: UserRow = {
  id: 0,
  type: 0,
  lower_name: '',
  name: '',
  full_name: '',
  email: '',
  keep_email_private: 0,
  passwd: '',
  passwd_hash_algo: '',
  salt: '',
  login_source: 0,
  login_name: '',
  location: '',
  website: '',
  description: '',
  language: '',
  avatar: '',
  is_admin: 0,
  is_active: 0,
  prohibit_login: 0,
  must_change_password: 0,
  is_restricted: 0,
  visibility: Visibility.Public,
  keep_activity_private: 0,
  repo_admin_change_team_access: 0,
  num_followers: 0,
  num_following: 0,
  num_stars: 0,
  created_unix: 0,
  updated_unix: 0,
  last_login_unix: 0,
};

/** Gitea's `NewGhostUser()`: virtual, never a row. */
export function ghostUser(): UserRow {
  return { ...blank, id: GHOST_USER_ID, name: 'Ghost', lower_name: 'ghost' };
}

/** Gitea's `NewActionsUser()`: virtual, never a row. */
export function actionsUser(): UserRow {
  return {
    ...blank,
    id: ACTIONS_USER_ID,
    type: 4,
    name: 'gitea-actions',
    lower_name: 'gitea-actions',
    full_name: 'Gitea Actions',
    email: 'teabot@gitea.io',
    keep_email_private: 1,
    login_name: 'gitea-actions',
    is_active: 1,
  };
}

/** The virtual user with this id (-1 or -2), or undefined. */
export function systemUserById(id: number): UserRow | undefined {
  if (id === GHOST_USER_ID) return ghostUser();
  if (id === ACTIONS_USER_ID) return actionsUser();
  return undefined;
}
