/** Row types of the Prisma models (one import point for services). */
export type {
  User,
  Repository,
  AccessToken,
  EmailAddress,
  PublicKey,
  Team,
  OrgUser,
  Collaboration,
  Label,
} from '../../generated/prisma/client';
