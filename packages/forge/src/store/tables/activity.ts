import type { DefaultFlag, DefaultNumber, DefaultText, Id } from './columns.js';

export interface ActionTable {
  id: Id;
  /** Receiver: whose feed the row belongs to. */
  user_id: number;
  op_type: number;
  act_user_id: number;
  repo_id: DefaultNumber;
  comment_id: DefaultNumber;
  ref_name: DefaultText;
  is_private: DefaultFlag;
  is_deleted: DefaultFlag;
  content: DefaultText;
  created_unix: number;
}

/** Action rows per receiver, actor, repository and 15-minute bucket; kept by triggers (migration 009). */
export interface ActionHeatmapTable {
  user_id: number;
  act_user_id: number;
  bucket: number;
  repo_id: number;
  contributions: number;
}

/** Non-deleted action rows per receiver, actor, repository and privacy; kept by triggers (migration 009). */
export interface ActionFeedCountTable {
  user_id: number;
  act_user_id: number;
  repo_id: number;
  is_private: 0 | 1;
  total: number;
}

/**
 * When activity answers may have changed (migration 012): `scope` is a receiving user's id (their action
 * rows) or 0 (who may see whose activity); triggers add one to `generation` on every such write.
 */
export interface ActivityGenerationTable {
  scope: number;
  generation: number;
}
