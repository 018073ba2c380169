/**
 * Typed domain errors. Services throw these; the one error mapper in api/errors.ts renders them in
 * Gitea's wire format. No handler builds an error body by hand.
 */
export abstract class ForgeError extends Error {
  abstract readonly status: number;
  /** Gitea renders some errors without the `url` key (account-state and sudo rejections). */
  readonly bare: boolean = false;
}

/** 400: Gitea's `ctx.Error(http.StatusBadRequest, …)`. */
export class BadRequest extends ForgeError {
  readonly status = 400;
}

/** 401: no or invalid credentials. */
export class Unauthorized extends ForgeError {
  readonly status = 401;
}

/** 403 with `{message, url}`. */
export class Forbidden extends ForgeError {
  readonly status = 403;
}

/** 403 with only `{message}` (account state, sudo), as Gitea writes them outside its error helper. */
export class ForbiddenBare extends ForgeError {
  readonly status = 403;
  override readonly bare = true;
}

/** 404: `{errors, message, url}`; `message` defaults to Gitea's locale text. */
export class NotFound extends ForgeError {
  readonly status = 404;
  constructor(
    message = "The target couldn't be found.",
    readonly errors: string[] | null = null,
  ) {
    super(message);
  }
}

/** 404 rendered as `{message, url}` without `errors` (Gitea's `APIError(404, err)`). */
export class NotFoundMessage extends ForgeError {
  readonly status = 404;
}

/** 405: the operation does not apply to this kind of target. */
export class MethodNotAllowed extends ForgeError {
  readonly status = 405;
}

/** 409: the thing already exists. */
export class Conflict extends ForgeError {
  readonly status = 409;
}

/** 413: an upload larger than the configured maximum. */
export class PayloadTooLarge extends ForgeError {
  readonly status = 413;
}

/** 422: invalid input or a state that forbids the change. */
export class Invalid extends ForgeError {
  readonly status = 422;
}

/** 423: the repository is archived (Gitea's repoArchivedError). */
export class Locked extends ForgeError {
  readonly status = 423;
}

/** 500 with a message shown only to site admins. */
export class Internal extends ForgeError {
  readonly status = 500;
}
