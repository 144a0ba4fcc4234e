/**
 * An email's attachments, fetched server-side before the send through the
 * SSRF-safe fetcher (contract C11): all of them together at most 28 MiB
 * (29,360,128 bytes; counted while reading), all within the fetch time
 * limit; one that cannot be fetched refuses the send.
 */
import { createGuardedFetcher } from '../../security/guarded-fetch.js';
import type { MailAttachment } from '../../vendors/mail/port.js';
import { refused } from './errors.js';
import type { AttachmentFetcher, AttachmentRef } from './service.js';

export const MAX_ATTACHMENT_BYTES = 28 * 1024 * 1024;
export const ATTACHMENTS_TOO_LARGE = 'Attachments exceed the 28MB limit';

export function createAttachmentFetcher(opts: { allowHosts: readonly string[]; timeoutMs: number; extraCaCerts?: string | undefined }): AttachmentFetcher & { close(): Promise<void> } {
  const fetcher = createGuardedFetcher({ allowHosts: opts.allowHosts, extraCaCerts: opts.extraCaCerts });
  const fetchAll = async (refs: readonly AttachmentRef[]): Promise<MailAttachment[]> => {
    const signal = AbortSignal.timeout(opts.timeoutMs);
    let remaining = MAX_ATTACHMENT_BYTES;
    const out: MailAttachment[] = [];
    for (const ref of refs) {
      const r = await fetcher.get(ref.url, { maxBytes: remaining, signal });
      if (!r.ok) {
        if (r.reason === 'too_large') throw refused(ATTACHMENTS_TOO_LARGE);
        throw refused(`Attachment ${ref.filename} could not be fetched: ${r.message}`);
      }
      remaining -= r.body.length;
      out.push({ filename: ref.filename, contentType: ref.contentType, content: r.body });
    }
    return out;
  };
  return Object.assign(fetchAll, { close: () => fetcher.close() });
}
