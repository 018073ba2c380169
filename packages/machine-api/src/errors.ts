/**
 * Typed domain errors (machine-state errors are `MachineError`, in machines/machine.ts). Services and
 * backends throw these; the one error mapper in server/ renders them as
 * the seed's `Error` body `{request_id, error_code, message}` with the status given here.
 */
export class ServiceError extends Error {
  constructor(
    readonly statusCode: number,
    readonly errorCode: string,
    message: string,
  ) {
    super(message);
    this.name = errorCode;
  }
}

export class BadRequest extends ServiceError {
  constructor(message: string) {
    super(400, 'BadRequest', message);
  }
}

/** The uploaded design is not a printable file (unknown type, truncated, no triangles, too big for the machine). */
export class InvalidDesign extends ServiceError {
  constructor(message: string) {
    super(400, 'InvalidDesign', message);
  }
}

export class NotFound extends ServiceError {
  constructor(message: string) {
    super(404, 'NotFound', message);
  }
}

export class PayloadTooLarge extends ServiceError {
  constructor(message: string) {
    super(413, 'PayloadTooLarge', message);
  }
}

/** The slicer ran and failed; its own message is kept (the anchor answers 400 here too). */
export class SlicingFailed extends ServiceError {
  constructor(message: string) {
    super(400, 'SlicingFailed', message);
  }
}

/** The request contradicts the current state of a resource (e.g. cancelling a job that already finished). */
export class Conflict extends ServiceError {
  constructor(message: string) {
    super(409, 'Conflict', message);
  }
}
