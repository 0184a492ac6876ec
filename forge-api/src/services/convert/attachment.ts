/** structs.Attachment. */
import type { Attachment } from '../../../generated/prisma/client';
import { fmtTime } from './common';
import type { ConvertContext } from './context';

export function toAttachment(c: ConvertContext, a: Attachment) {
  return {
    id: a.id,
    name: a.name,
    size: Number(a.size),
    download_count: a.downloadCount,
    created_at: fmtTime(a.createdAt),
    uuid: a.uuid,
    browser_download_url: `${c.rootUrl}attachments/${a.uuid}`,
  };
}
