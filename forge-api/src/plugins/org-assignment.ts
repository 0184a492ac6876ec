/**
 * Gitea's orgAssignment for the organization and team route groups: a route that declares
 * `config.org` gets the organization of its `{org}` path parameter, checked once before its
 * handler, in `request.orgCtx`; one that declares `config.team` gets the team of its `{id}`
 * parameter in `request.team`.
 * - org 'read': an organization the caller may see (404 otherwise; a public-only token reaches
 *   public organizations only, 403);
 * - org 'member' (reqOrgMembership): a member or site admin, else 403 "Must be an organization member";
 * - org 'owner' (reqOrgOwnership): an owner or site admin, else 403 "Must be an organization owner";
 *   with `outsider: 'notFound'` a caller who is not even a member gets 404, as the webhook routes do.
 * - team 'member' (reqTeamMembership): a member of the team, an owner of its organization or a
 *   site admin; another member of the organization gets 403 "Must be a team member", anyone
 *   else 404. Team 'owner' (then reqOrgOwnership): only owners and site admins, others 404.
 */
import type { FastifyInstance } from 'fastify';
import { NotFoundError, PermissionDeniedError, UnauthenticatedError } from '../services/errors';
import type { User } from '../services/records';
import type { TeamWithUnits } from '../services/teams';
import { shared } from './shared';

export interface OrgAssignment {
  access: 'read' | 'member' | 'owner';
  outsider?: 'forbidden' | 'notFound';
}

export interface TeamAssignment {
  access: 'member' | 'owner';
}

export interface OrgCtx {
  org: User;
  doer: User | null;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    org?: OrgAssignment;
    team?: TeamAssignment;
  }
  interface FastifyRequest {
    /** The organization of the path, visible to the caller (routes with `config.org`). */
    orgCtx: OrgCtx;
    /** The team of the path, reachable by the caller (routes with `config.team`). */
    team: TeamWithUnits;
  }
}

export const ORG_READ: OrgAssignment = { access: 'read' };
export const ORG_MEMBER: OrgAssignment = { access: 'member' };
export const ORG_OWNER: OrgAssignment = { access: 'owner' };

async function orgAssignment(app: FastifyInstance) {
  const { orgs, teams, permissions } = app.services;
  app.decorateRequest('orgCtx', null as unknown as OrgCtx);
  app.decorateRequest('team', null as unknown as TeamWithUnits);
  app.addHook('preHandler', async (request) => {
    const config = request.routeOptions.config;
    const doer = request.doer;
    if (config?.org) {
      const { access, outsider } = config.org;
      if (access !== 'read' && !doer) throw new UnauthenticatedError('token is required');
      const name = (request.params as { org: string }).org;
      const org = await orgs.getVisible(name, doer);
      if (org.type !== 1) throw new NotFoundError('not found', [`org does not exist [name: ${name}]`]);
      if (doer && !doer.isAdmin && access !== 'read') {
        const isOwner = access === 'owner' && (await permissions.isOrgOwner(doer.id, org.id));
        if (!isOwner) {
          const isMember = await permissions.isOrgMember(doer.id, org.id);
          if (access === 'member' && !isMember) throw new PermissionDeniedError('Must be an organization member');
          if (access === 'owner') {
            if (!isMember && outsider === 'notFound') throw new NotFoundError('not found');
            throw new PermissionDeniedError('Must be an organization owner');
          }
        }
      }
      request.orgCtx = { org, doer };
    }
    if (config?.team) {
      if (!doer) throw new UnauthenticatedError('token is required');
      const id = Number((request.params as { id: number | string }).id);
      const team = await teams.get(id);
      if (!team) throw new NotFoundError('not found', [`team does not exist [id: ${id}]`]);
      if (!doer.isAdmin && !(await permissions.isOrgOwner(doer.id, team.orgId))) {
        if (!(await teams.isMember(team.id, doer.id))) {
          if (await permissions.isOrgMember(doer.id, team.orgId)) throw new PermissionDeniedError('Must be a team member');
          throw new NotFoundError('not found');
        }
        if (config.team.access === 'owner') throw new NotFoundError('not found');
      }
      request.team = team;
    }
  });
}

export default shared(orgAssignment);
