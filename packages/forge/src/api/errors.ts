import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ForgeError, NotFound } from '../errors.js';

interface ValidationIssue {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

/** `tag_name` → `TagName`: go-chi/binding names fields by their Go struct field. */
export function goFieldName(jsonName: string): string {
  return jsonName
    .split('_')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}

const BINDING_RULES: Record<string, string> = {
  required: 'Required',
  minLength: 'Required',
  maxLength: 'MaxSize',
  pattern: 'AlphaDashDot',
  anyOf: 'In',
  const: 'In',
  enum: 'In',
  type: 'Json',
};

/** Gitea's 422 message for the first binding error: `[Field]: Rule`. */
export function validationMessage(issues: ValidationIssue[]): string {
  const issue = issues[0];
  if (!issue) return 'invalid request';
  const field =
    issue.keyword === 'required'
      ? String(issue.params.missingProperty ?? '')
      : (issue.instancePath.split('/').filter(Boolean)[0] ?? '');
  const rule = BINDING_RULES[issue.keyword] ?? issue.message ?? issue.keyword;
  return `[${goFieldName(field)}]: ${rule}`;
}

/** Installs the one error mapper: domain errors and framework errors become Gitea's error bodies. */
export function installErrorMapper(app: FastifyInstance, swaggerUrlOf: () => string): void {
  const send = (reply: FastifyReply, error: ForgeError) => {
    const swaggerUrl = swaggerUrlOf();
    if (error instanceof NotFound) {
      return reply.code(404).send({ errors: error.errors, message: error.message, url: swaggerUrl });
    }
    return reply
      .code(error.status)
      .send(error.bare ? { message: error.message } : { message: error.message, url: swaggerUrl });
  };

  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const swaggerUrl = swaggerUrlOf();
    if (error instanceof ForgeError) return send(reply, error);
    if (error.validation) {
      return reply
        .code(422)
        .send({ message: validationMessage(error.validation as ValidationIssue[]), url: swaggerUrl });
    }
    if (error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
      return reply.code(422).send({ message: `[]: Json: ${error.message}`, url: swaggerUrl });
    }
    const status = error.statusCode ?? 500;
    if (status < 500) return reply.code(status).send({ message: error.message, url: swaggerUrl });
    request.log.error({ err: error }, 'internal error');
    // Gitea shows 500 details to site admins only.
    const message = request.auth?.user?.is_admin ? error.message : '';
    return reply.code(500).send({ message, url: swaggerUrl });
  });

  app.setNotFoundHandler((_request, reply) => send(reply, new NotFound()));
}
