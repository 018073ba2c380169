import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Static, Type } from 'typebox';
import { requireScopes, requireSiteAdmin, requireUser } from '../auth/guards.js';
import { rfc3339 } from '../convert/time.js';
import { NotFound } from '../errors.js';
import { addPrincipal, deletePrincipal, listUserPrincipals } from '../services/ssh-principals.js';
import { individualByName } from '../services/users.js';
import type { PublicKeyRow } from '../store/schema.js';
import { pageOf, setListHeaders } from './pagination.js';
import type { ApiRouteOptions } from './route-options.js';

/** An SSH certificate principal registered by a user (a `public_key` row of the principal kind). */
const PrincipalSchema = Type.Object({
  id: Type.Integer(),
  principal: Type.String(),
  title: Type.String(),
  key_type: Type.Literal('principal'),
  created_at: Type.String(),
});
type Principal = Static<typeof PrincipalSchema>;

const CreatePrincipalSchema = Type.Object({
  principal: Type.String({ minLength: 1, maxLength: 255 }),
  title: Type.Optional(Type.String({ maxLength: 50 })),
});

function toPrincipal(row: PublicKeyRow): Principal {
  return {
    id: row.id,
    principal: row.content,
    title: row.name,
    key_type: 'principal',
    created_at: rfc3339(row.created_unix),
  };
}

/** `/user/principals`: the caller's own principals (token category `user`). */
const ownPrincipalRoutes: FastifyPluginAsyncTypebox<ApiRouteOptions> = async (user, { ctx }) => {
  const { config } = ctx;
  user.addHook('onRequest', requireScopes('user'));

  user.get(
    '/user/principals',
    { schema: { response: { 200: Type.Array(PrincipalSchema) } } },
    async (request, reply) => {
      const doer = requireUser(request);
      const page = pageOf(request, config);
      const { rows, total } = await listUserPrincipals(ctx, doer, page);
      setListHeaders(reply, request, config, total, page);
      return rows.map(toPrincipal);
    },
  );

  user.post(
    '/user/principals',
    { schema: { body: CreatePrincipalSchema, response: { 201: PrincipalSchema } } },
    async (request, reply) => {
      const doer = requireUser(request);
      const row = await addPrincipal(ctx, doer, doer, request.body);
      return reply.code(201).send(toPrincipal(row));
    },
  );

  user.delete(
    '/user/principals/:id',
    { schema: { params: Type.Object({ id: Type.String() }) } },
    async (request, reply) => {
      const doer = requireUser(request);
      await deletePrincipal(ctx, doer, Number(request.params.id));
      return reply.code(204).send(null);
    },
  );
};

/** `/admin/users/{username}/principals`: a site admin registers any principal for a user (category `admin`). */
const adminPrincipalRoutes: FastifyPluginAsyncTypebox<ApiRouteOptions> = async (admin, { ctx }) => {
  admin.addHook('onRequest', requireScopes('admin'));
  admin.post(
    '/admin/users/:username/principals',
    {
      schema: {
        params: Type.Object({ username: Type.String() }),
        body: CreatePrincipalSchema,
        response: { 201: PrincipalSchema },
      },
    },
    async (request, reply) => {
      const doer = requireSiteAdmin(request);
      const owner = await individualByName(ctx, request.params.username);
      if (!owner) throw new NotFound();
      const row = await addPrincipal(ctx, doer, owner, request.body);
      return reply.code(201).send(toPrincipal(row));
    },
  );
};

/**
 * SSH certificate principals, the key kind HTTP-signature certificate mode authenticates with: a
 * certificate naming a registered principal signs requests as the user who registered it.
 */
export const sshPrincipalRoutes: FastifyPluginAsyncTypebox<ApiRouteOptions> = async (app, { ctx }) => {
  // Only ctx is handed on: the prefix is inherited, passing it again would double it.
  await app.register(ownPrincipalRoutes, { ctx });
  await app.register(adminPrincipalRoutes, { ctx });
};
