/**
 * The OAuth2 provider's storage (oidc-provider's adapter interface) on the forge's database:
 * one row per stored object, under (kind, id), its payload as JSON. Client, account and grant
 * ids are copied out of the payload so that revoking an application, a user or a grant is one
 * DELETE, and a revoked token is gone for the next request of any forge process.
 * Clients are not stored here: they are the registered applications and the built-ins
 * (clientMetadata, given by the caller).
 */
import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { Prisma } from '../database';

export type ClientMetadataLookup = (clientId: string) => Promise<AdapterPayload | undefined>;

export class ProviderStore implements Adapter {
  constructor(
    private readonly prisma: Prisma,
    private readonly kind: string,
    private readonly clientMetadata: ClientMetadataLookup,
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
    const data = {
      payload: JSON.stringify(payload),
      grantId: payload.grantId ?? null,
      uid: payload.uid ?? null,
      userCode: payload.userCode ?? null,
      clientId: payload.clientId ?? null,
      accountId: payload.accountId ?? null,
      expiresAt: expiresIn ? new Date(Date.now() + expiresIn * 1000) : null,
    };
    await this.prisma.oAuth2ProviderRecord.upsert({
      where: { kind_id: { kind: this.kind, id } },
      create: { kind: this.kind, id, ...data },
      update: data,
    });
  }

  private async findWhere(where: { id?: string; uid?: string; userCode?: string }): Promise<AdapterPayload | undefined> {
    const row = await this.prisma.oAuth2ProviderRecord.findFirst({ where: { kind: this.kind, ...where } });
    if (!row) return undefined;
    if (row.expiresAt && row.expiresAt.getTime() <= Date.now()) {
      await this.prisma.oAuth2ProviderRecord.deleteMany({ where: { kind: this.kind, id: row.id } });
      return undefined;
    }
    const payload = JSON.parse(row.payload) as AdapterPayload;
    if (row.consumedAt) payload.consumed = Math.floor(row.consumedAt.getTime() / 1000);
    return payload;
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    if (this.kind === 'Client') return this.clientMetadata(id);
    return this.findWhere({ id });
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return this.findWhere({ uid });
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    return this.findWhere({ userCode });
  }

  async consume(id: string): Promise<void> {
    await this.prisma.oAuth2ProviderRecord.updateMany({ where: { kind: this.kind, id }, data: { consumedAt: new Date() } });
  }

  async destroy(id: string): Promise<void> {
    await this.prisma.oAuth2ProviderRecord.deleteMany({ where: { kind: this.kind, id } });
  }

  /** Every kind at once: a revoked grant takes its codes, access and refresh tokens along. */
  async revokeByGrantId(grantId: string): Promise<void> {
    await this.prisma.oAuth2ProviderRecord.deleteMany({ where: { grantId } });
  }
}
