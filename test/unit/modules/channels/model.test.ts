/** Delivery status moves (spec 03 part 3), the reaction emoji rule, the richBody renderer and the sandbox receipts plan. */
import { describe, expect, it } from 'vitest';
import { canMove, DELIVERY_STATUSES } from '../../../../src/modules/channels/model.js';
import { isSingleEmoji } from '../../../../src/modules/channels/service.js';
import { bracketed, renderRichBody, richBodyText } from '../../../../src/modules/channels/email-render.js';
import { plannedReceipts } from '../../../../src/vendors/messaging/sandbox.js';

describe('status moves', () => {
  it('moves forward only, to failed or expired from any live status, never out of a terminal one', () => {
    expect(canMove('queued', 'accepted')).toBe(true);
    expect(canMove('accepted', 'read')).toBe(true);
    expect(canMove('delivered', 'sent')).toBe(false);
    expect(canMove('read', 'read')).toBe(false);
    for (const from of ['queued', 'accepted', 'sent', 'delivered', 'read'] as const) {
      expect(canMove(from, 'failed')).toBe(true);
      expect(canMove(from, 'expired')).toBe(true);
    }
    for (const to of DELIVERY_STATUSES) {
      expect(canMove('failed', to)).toBe(false);
      expect(canMove('expired', to)).toBe(false);
    }
  });
});

describe('reaction emoji', () => {
  it('is one emoji grapheme (with modifiers and joiners), nothing else', () => {
    for (const e of ['👍', '👍🏽', '❤️', '👨‍👩‍👧', '🇫🇷']) expect(isSingleEmoji(e), e).toBe(true);
    for (const e of ['', 'a', '👍👍', '👍 ', ':)', '1']) expect(isSingleEmoji(e), e).toBe(false);
  });
});

describe('richBody', () => {
  it('renders markdown and ::: blocks, escapes raw HTML, keeps the markdown as the plain part', () => {
    const html = renderRichBody('Hi **there**\n:::card\n# Title\n:::\n<img src=x onerror=alert(1)>');
    expect(html).toContain('<strong>there</strong>');
    expect(html).toContain('<div class="lua-component lua-component-card"><h1>Title</h1>');
    expect(html).not.toContain('<img');
    expect(richBodyText('a\n:::card\nb\n:::')).toBe('a\nb');
    expect(bracketed('x@y')).toBe('<x@y>');
    expect(bracketed('<x@y>')).toBe('<x@y>');
  });
});

describe('sandbox receipts', () => {
  const msg = (channel: 'sms' | 'chatapp' | 'webchat', address: string) => ({ channel, channelIdentifier: null, address, body: { kind: 'text' as const, text: 'x' } });
  it('plays failed for 9999, sent-delivered-read for 7777, nothing otherwise or off sms and chatapp', () => {
    expect(plannedReceipts(msg('sms', '+15550009999'))).toEqual(['failed']);
    expect(plannedReceipts(msg('chatapp', '+15550007777'))).toEqual(['sent', 'delivered', 'read']);
    expect(plannedReceipts(msg('sms', '+15550001234'))).toEqual([]);
    expect(plannedReceipts(msg('webchat', 'x7777'))).toEqual([]);
  });
});
