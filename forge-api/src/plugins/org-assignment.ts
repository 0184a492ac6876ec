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
 * - team routes (Gitea 1.27's team middleware; site admins and owners of the team's
 *   organization always pass): 'read' (reqTeamReadAccess) admits the team's members and those its
 *   visibility admits (public: whoever sees the organization; limited: organization members);
 *   'member' (reqTeamMembership) only its members; refused callers who are members of the
 *   organization get 403 "Must be a team member", others 404. 'owner' (reqOrgOwnership) is 403
 *   "Must be an organization owner" for everyone else. `orgMember` (reqOrgMembership) also needs
 *   organization membership (403 "Must be an organization member"). A public-only token reaches
 *   teams of public organizations only (403).
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
  access: 'read' | 'member' | 'owner';
  orgMember?: boolean;
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
  const { orgs, teams, permissions, users } = app.services;
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
      const { access, orgMember } = config.team;
      const id = Number((request.params as { id: number | string }).id);
      const team = await teams.get(id);
      if (!team) throw new NotFoundError('not found', [`team does not exist [id: ${id}]`]);
      const org = await users.findById(team.orgId);
      if (!org) throw new NotFoundError('not found', [`org does not exist [id: ${team.orgId}]`]);
      if (request.auth?.scopes?.publicOnly && org.visibility !== 0) throw new PermissionDeniedError('token scope is limited to public orgs');
      if (!doer.isAdmin && !(await permissions.isOrgOwner(doer.id, org.id))) {
        if (access === 'owner') throw new PermissionDeniedError('Must be an organization owner');
        const admitted = (await teams.isMember(team.id, doer.id)) || (access === 'read' && (await teams.nonMemberCanRead(team, org, doer)));
        const isOrgMember = await permissions.isOrgMember(doer.id, org.id);
        if (!admitted) {
          if (isOrgMember) throw new PermissionDeniedError('Must be a team member');
          throw new NotFoundError('not found');
        }
        if (orgMember && !isOrgMember) throw new PermissionDeniedError('Must be an organization member');
      }
      request.team = team;
    }
  });
}

export default shared(orgAssignment);
