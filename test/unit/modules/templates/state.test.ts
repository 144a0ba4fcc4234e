/** The template and version state machines (state.ts): every row of their tables, and the moves they refuse. */
import { describe, expect, it } from 'vitest';
import { isRefused, PUBLISHED, templateTransition, versionTransition, type TemplateListing } from '../../../../src/modules/templates/state.js';

const listing = (over: Partial<TemplateListing> = {}): TemplateListing => ({ visibility: 'private', listed: true, pendingVisibility: null, ...over });

describe('template listing', () => {
  it('makes a template private at once, dropping a pending review', () => {
    expect(templateTransition(listing({ visibility: 'public' }), { type: 'visibility_requested', to: 'private' })).toEqual(listing());
    expect(templateTransition(listing({ pendingVisibility: 'public' }), { type: 'visibility_requested', to: 'private' })).toEqual(listing());
  });

  it('sends private to public through review, and public to public nowhere', () => {
    const pending = templateTransition(listing(), { type: 'visibility_requested', to: 'public' });
    expect(pending).toEqual(listing({ pendingVisibility: 'public' }));
    expect(templateTransition(pending as TemplateListing, { type: 'review_approved' })).toEqual(listing({ visibility: 'public' }));
    expect(templateTransition(pending as TemplateListing, { type: 'review_rejected' })).toEqual(listing());
    expect(templateTransition(listing({ visibility: 'public' }), { type: 'visibility_requested', to: 'public' })).toEqual(listing({ visibility: 'public' }));
  });

  it('refuses a review decision with no review pending', () => {
    expect(isRefused(templateTransition(listing(), { type: 'review_approved' }))).toBe(true);
    expect(isRefused(templateTransition(listing({ visibility: 'public' }), { type: 'review_rejected' }))).toBe(true);
  });

  it('unlists, and lists again on a published version', () => {
    const unlisted = templateTransition(listing({ visibility: 'public' }), { type: 'unlisted' });
    expect(unlisted).toEqual(listing({ visibility: 'public', listed: false }));
    expect(templateTransition(unlisted as TemplateListing, { type: 'version_published' })).toEqual(listing({ visibility: 'public' }));
  });
});

describe('template version', () => {
  it('starts pending and is approved or rejected once', () => {
    expect(PUBLISHED).toEqual({ approvalStatus: 'pending', deprecated: false, deprecatedReason: null });
    const approved = versionTransition(PUBLISHED, { type: 'approved' });
    expect(approved).toEqual({ ...PUBLISHED, approvalStatus: 'approved' });
    expect(versionTransition(PUBLISHED, { type: 'rejected' })).toEqual({ ...PUBLISHED, approvalStatus: 'rejected' });
    expect(isRefused(versionTransition({ ...PUBLISHED, approvalStatus: 'approved' }, { type: 'rejected' }))).toBe(true);
    expect(isRefused(versionTransition({ ...PUBLISHED, approvalStatus: 'rejected' }, { type: 'approved' }))).toBe(true);
  });

  it('deprecates in any approval state; a second deprecate keeps the first reason', () => {
    const once = versionTransition({ ...PUBLISHED, approvalStatus: 'approved' }, { type: 'deprecated', reason: 'broken' });
    expect(once).toEqual({ approvalStatus: 'approved', deprecated: true, deprecatedReason: 'broken' });
    expect(versionTransition(once as typeof PUBLISHED, { type: 'deprecated', reason: 'other' })).toEqual(once);
    expect(versionTransition(PUBLISHED, { type: 'deprecated', reason: null })).toEqual({ ...PUBLISHED, deprecated: true });
  });
});
