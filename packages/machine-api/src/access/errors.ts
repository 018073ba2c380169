/** The access errors; the one error mapper renders them in the seed's `Error` shape like any other. */

import { ServiceError } from '../errors.js';

/** No key, or a key the service does not know (never says which, so keys cannot be probed). */
export class Unauthorized extends ServiceError {
  constructor(message: string) {
    super(401, 'Unauthorized', message);
  }
}

/** A valid key without the scope the route needs; the message names the scope. */
export class MissingScope extends ServiceError {
  constructor(message: string) {
    super(403, 'MissingScope', message);
  }
}

/** A state-changing request from a web page of an origin that is not allowed (drive-by protection). */
export class ForeignOrigin extends ServiceError {
  constructor(message: string) {
    super(403, 'ForeignOrigin', message);
  }
}
