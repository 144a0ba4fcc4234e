/**
 * The persona routes of spec 03 part 4.1, row by row, over HTTP against the started service (the
 * sandbox model provider), with part 7's persona messages word for word and the one-draft rule.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../../../helpers/api-app.js';
import { ALL, agentPath, PERSONA_SEED, PRESETS } from '../../../helpers/persona.js';

describe('persona routes', () => {
  let app: TestApi;
  beforeAll(async () => {
    app = await startApi({ SEED_FILE: PERSONA_SEED });
  });
  afterAll(async () => {
    await app?.stop();
  });

  const call = (method: string, agentId: string, path: string, body?: unknown, token = ALL) =>
    app.request(method, `${agentPath(agentId)}${path}`, { token, ...(body !== undefined ? { body } : {}) });
  const audit = async (agentId: string): Promise<string[]> =>
    (await app.store.sql.query<{ action: string }>("select action from audit_log where target_id = $1 and action like 'persona.%' order by at, id", [agentId])).map((r) => r.action);

  describe('versions: create, list, read, activate', () => {
    const A = 'agt_p1';

    it('POST persona/version stores the string form and the object form as given, numbered 1, 2, ..., each current from the next message', async () => {
      const first = await call('POST', A, '/persona/version', { persona: 'You are the support bot.' });
      expect(first.status).toBe(201);
      expect(first.body).toEqual({ status: 'success', message: expect.any(String), version: 1 });
      const object = { base: 'You are the support bot.', voice: 'Speak slowly.', text: 'Write briefly.' };
      const second = await call('POST', A, '/persona/version', { persona: object });
      expect(second.status).toBe(201);
      expect(second.body.version).toBe(2);

      const one = await call('GET', A, '/persona/version/1');
      expect(one.body.version.persona).toBe('You are the support bot.');
      const two = await call('GET', A, '/persona/version/2');
      expect(two.body.version.persona).toEqual(object);
      expect(two.body.version.isCurrent).toBe(true);
      expect(one.body.version.isCurrent).toBe(false);
      expect(await audit(A)).toEqual(['persona.version.created', 'persona.version.created']);
    });

    it('GET persona/version/:version answers the full version with its storage fields', async () => {
      const res = await call('GET', A, '/persona/version/1');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        status: 'success',
        message: expect.any(String),
        version: {
          id: expect.any(String), _id: expect.any(String), __v: 0, agentId: A, version: 1, persona: 'You are the support bot.', config: {},
          createdBy: 'usr_ann', createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), createdDate: expect.any(Number),
          isCurrent: false, versionStatus: 'published', agentVersion: '1',
        },
      });
      expect(res.body.version._id).toBe(res.body.version.id);
      expect(new Date(res.body.version.createdAt).getTime()).toBe(res.body.version.createdDate);
    });

    it('GET persona/versions lists every version newest first with {version, createdDate, createdBy, isCurrent, persona}', async () => {
      const res = await call('GET', A, '/persona/versions');
      expect(res.status).toBe(200);
      expect(res.body.status).toBe('success');
      expect(typeof res.body.message).toBe('string');
      expect(res.body.versions.map((v: { version: number }) => v.version)).toEqual([2, 1]);
      expect(res.body.versions[1]).toEqual({ version: 1, createdDate: expect.any(Number), createdBy: 'usr_ann', isCurrent: false, versionStatus: 'published', persona: 'You are the support bot.' });
    });

    it('POST persona/version/:version makes an earlier version current at once', async () => {
      const res = await call('POST', A, '/persona/version/1');
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ status: 'success', message: expect.any(String), version: 1 });
      const list = await call('GET', A, '/persona/versions');
      expect(list.body.versions.map((v: { isCurrent: boolean }) => v.isCurrent)).toEqual([false, true]);
      expect((await audit(A)).at(-1)).toBe('persona.version.activated');
    });

    it('records the agent version that was current; a new agent version leaves the served persona as it was', async () => {
      const B = 'agt_p10';
      await call('POST', B, '/persona/version', { persona: 'under agent version 1' });
      // A promotion of the agent to another version (the store kernel's agents table).
      await app.store.sql.query("update agents set version = '2' where id = $1", [B]);
      const served = await call('GET', B, '/persona/version/1');
      expect(served.body.version).toMatchObject({ isCurrent: true, agentVersion: '1', persona: 'under agent version 1' });
      await call('POST', B, '/persona/version', { persona: 'under agent version 2' });
      expect((await call('GET', B, '/persona/version/2')).body.version).toMatchObject({ isCurrent: true, agentVersion: '2' });
    });

    it('answers 404 "Persona version <n> not found for agent <id>" for an unknown version, read or activated', async () => {
      for (const method of ['GET', 'POST']) {
        const res = await call(method, A, '/persona/version/99');
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ statusCode: 404, error: 'Not Found', message: `Persona version 99 not found for agent ${A}` });
      }
    });

    it('refuses a persona that is neither a string nor the object form, changing nothing', async () => {
      const before = (await call('GET', A, '/persona/versions')).body.versions.length;
      for (const persona of [null, 42, true, ['a'], { base: 1 }, { other: 'x' }]) {
        const res = await call('POST', A, '/persona/version', { persona });
        expect(res.status, JSON.stringify(persona)).toBe(400);
        expect(res.body).toEqual({ statusCode: 400, error: 'Bad Request', message: expect.arrayContaining(['persona must be a string or an object {base?, voice?, text?} of strings']) });
      }
      const missing = await call('POST', A, '/persona/version', {});
      expect(missing.status).toBe(400);
      expect(missing.body).toEqual({ statusCode: 400, error: 'Bad Request', message: ['persona is required'] });
      expect((await call('GET', A, '/persona/versions')).body.versions.length).toBe(before);
    });

    it('refuses a version number that is not a positive integer', async () => {
      const res = await call('GET', A, '/persona/version/abc');
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ statusCode: 400, error: 'Bad Request', message: ['version must be a positive integer'] });
    });
  });

  describe('generate and the status filter', () => {
    const A = 'agt_p2';

    it('POST persona stores generated text naming agentName as a new, current version', async () => {
      const res = await call('POST', A, '/persona', { agentName: 'Ada', businessType: 'bakery', businessWebsite: 'https://bakery.example' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ status: 'success', message: expect.any(String), persona: expect.stringContaining('Ada'), version: 1 });
      const again = await call('POST', A, '/persona', { agentName: 'Ada', businessType: 'bakery', businessWebsite: 'https://bakery.example' });
      expect(again.body.persona).toBe(res.body.persona);
      expect(again.body.version).toBe(2);
      const stored = await call('GET', A, '/persona/version/1');
      expect(stored.body.version.persona).toBe(res.body.persona);
      expect(res.headers.get('deprecation')).toBeNull();
    });

    it('reads the deprecated brandPersonality and brandTraits and says they are deprecated', async () => {
      const res = await call('POST', A, '/persona', { agentName: 'Ada', brandPersonality: 'cheerful', brandTraits: 'precise' });
      expect(res.status).toBe(201);
      expect(res.headers.get('deprecation')).toBe('true');
      expect(new Date(res.headers.get('sunset') ?? '').getTime()).toBeGreaterThan(Date.now());
      expect(res.headers.get('warning')).toBe('299 - "The brandPersonality and brandTraits fields are deprecated; use personalityAndVoice"');
      expect(res.body.persona).toContain('cheerful');
      const one = await call('POST', A, '/persona/draft', { agentName: 'Ada', brandTraits: 'precise' });
      expect(one.status).toBe(201);
      expect(one.headers.get('warning')).toBe('299 - "The brandTraits field is deprecated; use personalityAndVoice"');
    });

    it('status=draft lists only the draft, status=published only published versions, all (the default) both', async () => {
      const draft = await call('POST', A, '/persona/draft', { agentName: 'Ada' });
      expect(draft.status).toBe(201);
      const only = async (status?: string) =>
        (await call('GET', A, `/persona/versions${status ? `?status=${status}` : ''}`)).body.versions.map((v: { version: number; versionStatus: string }) => `${v.version}:${v.versionStatus}`);
      expect(await only('draft')).toEqual([`${draft.body.version}:draft`]);
      expect(await only('published')).toEqual(['3:published', '2:published', '1:published']);
      expect(await only('all')).toEqual([`${draft.body.version}:draft`, '3:published', '2:published', '1:published']);
      expect(await only()).toEqual(await only('all'));
      const bad = await call('GET', A, '/persona/versions?status=old');
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({ statusCode: 400, error: 'Bad Request', message: ['status must be one of draft, published, all'] });
    });
  });

  describe('drafts: create, exists, regenerate, publish, discard', () => {
    const A = 'agt_p3';
    const body = {
      agentName: 'Nia', businessType: 'clinic', voiceChips: [{ title: 'Calm', isEnabled: true }, { title: 'Loud', isEnabled: false }],
      roleAndPurpose: ['Book appointments.'], contextAndAudience: ['Patients of the clinic.'], personalityAndVoice: ['Calm and kind.'],
      rulesAndBoundaries: ['Never give a diagnosis.'], aboutProductsOrServices: ['General practice and vaccinations.'],
      hasContextAndAudience: false, hasBusinessInfo: false,
    };

    it('POST persona/draft generates a draft holding each included section and none of an omitted one, its config as given', async () => {
      const res = await call('POST', A, '/persona/draft', body);
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ status: 'draft', message: expect.any(String), version: 1, versionStatus: 'draft', persona: expect.any(String), config: body });
      const text: string = res.body.persona;
      for (const s of ['Nia', 'Book appointments.', 'Calm and kind.', 'Never give a diagnosis.']) expect(text).toContain(s);
      for (const s of ['Patients of the clinic.', 'General practice and vaccinations.']) expect(text).not.toContain(s);
      // A draft is never current.
      expect((await call('GET', A, '/persona/version/1')).body.version.isCurrent).toBe(false);
    });

    it('a second POST persona/draft answers 201 draft_exists with the existing draft, generating nothing', async () => {
      const res = await call('POST', A, '/persona/draft', { agentName: 'Other' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ status: 'draft_exists', message: expect.any(String), version: 1, versionStatus: 'draft', persona: expect.stringContaining('Nia'), config: body });
      expect((await call('GET', A, '/persona/versions?status=draft')).body.versions).toHaveLength(1);
    });

    it('PUT persona/draft regenerates the draft under the same number', async () => {
      const res = await call('PUT', A, '/persona/draft', { agentName: 'Nia', roleAndPurpose: ['Answer the phone.'], persona: 'ignored when the role is given' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'draft', message: expect.any(String), version: 1, versionStatus: 'draft', persona: expect.stringContaining('Answer the phone.'), config: { agentName: 'Nia', roleAndPurpose: ['Answer the phone.'] } });
      expect(res.body.persona).not.toContain('Book appointments.');
    });

    it('a draft body\'s persona fills the configuration the body left out', async () => {
      const B = 'agt_p9';
      const res = await call('POST', B, '/persona/draft', { persona: { base: 'Help travellers.\nKeep it short.' } });
      expect(res.status).toBe(201);
      expect(res.body.config).toEqual({ roleAndPurpose: ['Help travellers.', 'Keep it short.'] });
      expect(res.body.persona).toContain('Keep it short.');
    });

    it('POST persona/publish of a version that is not the draft answers 404 "Draft version <n> not found for agent <id>"', async () => {
      await call('POST', A, '/persona/version', { persona: 'published one' });
      for (const n of [2, 7]) {
        const res = await call('POST', A, '/persona/publish', { version: n });
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ statusCode: 404, error: 'Not Found', message: `Draft version ${n} not found for agent ${A}` });
      }
    });

    it('POST persona/publish without a numeric version answers 400, changing nothing', async () => {
      for (const b of [{}, { version: '1' }, { version: 1.5 }]) {
        const res = await call('POST', A, '/persona/publish', b);
        expect(res.status).toBe(400);
        expect(res.body.error).toBe('Bad Request');
      }
      expect((await call('GET', A, '/persona/versions?status=draft')).body.versions).toHaveLength(1);
    });

    it('POST persona/publish publishes the draft and makes it current', async () => {
      const res = await call('POST', A, '/persona/publish', { version: 1 });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ status: 'success', message: expect.any(String), version: 1, persona: expect.stringContaining('Answer the phone.'), versionStatus: 'published' });
      const list = (await call('GET', A, '/persona/versions')).body.versions;
      expect(list.map((v: { version: number; isCurrent: boolean; versionStatus: string }) => [v.version, v.isCurrent, v.versionStatus])).toEqual([[2, false, 'published'], [1, true, 'published']]);
      expect((await call('GET', A, '/persona/versions?status=draft')).body.versions).toEqual([]);
    });

    it('publishing a draft whose text is empty builds the text from its configuration first', async () => {
      const draft = await call('POST', A, '/persona/draft', { agentName: 'Nia', rulesAndBoundaries: ['Be on time.'] });
      expect(draft.body.status).toBe('draft');
      await app.store.sql.query(`update persona_versions set persona = '""'::jsonb where agent_id = $1 and version = $2`, [A, draft.body.version]);
      const res = await call('POST', A, '/persona/publish', { version: draft.body.version });
      expect(res.status).toBe(201);
      expect(res.body.persona).toContain('Be on time.');
      expect(res.body.persona).toContain('Nia');
      expect((await call('GET', A, `/persona/version/${draft.body.version}`)).body.version.persona).toBe(res.body.persona);
    });

    it('DELETE persona/draft discards the draft; its number is never reused', async () => {
      const draft = await call('POST', A, '/persona/draft', { agentName: 'Gone' });
      expect(draft.body.version).toBe(4);
      const res = await call('DELETE', A, '/persona/draft');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'success', message: expect.any(String) });
      expect((await call('GET', A, '/persona/version/4')).status).toBe(404);
      const next = await call('POST', A, '/persona/version', { persona: 'after the discard' });
      expect(next.body.version).toBe(5);
      const again = await call('DELETE', A, '/persona/draft');
      expect(again.status).toBe(404);
      expect(again.body).toEqual({ statusCode: 404, error: 'Not Found', message: `No draft found for agent ${A}` });
      const regen = await call('PUT', A, '/persona/draft', { agentName: 'x' });
      expect(regen.status).toBe(404);
      expect(regen.body.message).toBe(`No draft found for agent ${A}`);
    });

    it('a draft cannot be activated: it is published instead', async () => {
      const draft = await call('POST', A, '/persona/draft', {});
      const res = await call('POST', A, `/persona/version/${draft.body.version}`);
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ statusCode: 409, error: 'Conflict', message: `Persona version ${draft.body.version} of agent ${A} is the draft: publish it to make it current` });
      await call('DELETE', A, '/persona/draft');
    });

    it('records every change in the audit, in its own transaction', async () => {
      expect(await audit(A)).toEqual([
        'persona.draft.created', 'persona.draft.regenerated', 'persona.version.created', 'persona.draft.published',
        'persona.draft.created', 'persona.draft.published', 'persona.draft.created', 'persona.draft.discarded',
        'persona.version.created', 'persona.draft.created', 'persona.draft.discarded',
      ]);
    });
  });

  describe('new versions of one agent at once', () => {
    it('30 creates and generates racing on one agent get the numbers 1 to 30, each once, each answered its own, each audited with it; one is current, the highest', async () => {
      const A = 'agt_p12';
      const answers = await Promise.all(Array.from({ length: 30 }, (_, i) =>
        i % 5 === 4
          ? call('POST', A, '/persona', { agentName: `Racer ${i}` })
          : call('POST', A, '/persona/version', { persona: `racer ${i}` })));
      expect(answers.map((r) => r.status)).toEqual(Array(30).fill(201));
      const numbers = answers.map((r) => r.body.version as number);
      expect([...numbers].sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
      // Each answer names the version that holds its own persona.
      for (const [i, r] of answers.entries()) {
        const stored = (await call('GET', A, `/persona/version/${r.body.version}`)).body.version;
        if (i % 5 === 4) expect(stored.persona).toContain(`Racer ${i}`);
        else expect(stored.persona).toBe(`racer ${i}`);
      }
      const list = (await call('GET', A, '/persona/versions')).body.versions as { version: number; isCurrent: boolean }[];
      expect(list.filter((v) => v.isCurrent).map((v) => v.version)).toEqual([30]);
      const entries = await app.store.sql.query<{ action: string; details: { version: number } }>(
        "select action, details from audit_log where target_id = $1 and action like 'persona.%'", [A]);
      expect(entries.map((e) => e.details.version).sort((a, b) => a - b)).toEqual(numbers.sort((a, b) => a - b));
      expect(entries.filter((e) => e.action === 'persona.generated')).toHaveLength(6);
      // A create after them takes the next number.
      expect((await call('POST', A, '/persona/version', { persona: 'after' })).body.version).toBe(31);
    });
  });

  describe('one draft per agent', () => {
    it('two draft creates racing leave one draft: one answer is the draft, the other draft_exists with it', async () => {
      for (const A of ['agt_p4', 'agt_p5']) {
        const [a, b] = await Promise.all([call('POST', A, '/persona/draft', { agentName: 'A' }), call('POST', A, '/persona/draft', { agentName: 'B' })]);
        expect([a.status, b.status]).toEqual([201, 201]);
        expect([a.body.status, b.body.status].sort()).toEqual(['draft', 'draft_exists']);
        expect(a.body.version).toBe(b.body.version);
        expect(a.body.persona).toBe(b.body.persona);
        const drafts = await app.store.sql.query<{ n: number }>("select count(*)::int as n from persona_versions where agent_id = $1 and status = 'draft'", [A]);
        expect(drafts[0]!.n).toBe(1);
      }
    });

    it('the database refuses a second draft of an agent whoever writes it', async () => {
      await expect(
        app.store.sql.query("insert into persona_versions (id, agent_id, version, status, persona, created_by) values ('x-second', 'agt_p4', 99, 'draft', '\"x\"', 'usr_ann')"),
      ).rejects.toThrow(/persona_one_draft/);
    });
  });

  describe('presets', () => {
    it('GET presets lists the built-in and seeded presets as {id, title, description}', async () => {
      const res = await app.request('GET', PRESETS, { token: ALL });
      expect(res.status).toBe(200);
      expect(res.body.status).toBe('success');
      const ids = res.body.presets.map((p: { id: string }) => p.id);
      expect(ids).toEqual(expect.arrayContaining(['pre_sales_assistant', 'pre_receptionist', 'pre_support', 'pre_customer_support']));
      expect(res.body.presets.find((p: { id: string }) => p.id === 'pre_support')).toEqual({ id: 'pre_support', title: 'Support desk', description: 'A seeded support desk preset.' });
      // The seed file replaces a built-in preset of the same id.
      expect(res.body.presets.find((p: { id: string }) => p.id === 'pre_customer_support').title).toBe('Customer support (seeded)');
    });

    it('GET presets/:presetId answers the preset with its config', async () => {
      const res = await app.request('GET', `${PRESETS}/pre_support`, { token: ALL });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'success', preset: { id: 'pre_support', title: 'Support desk', description: 'A seeded support desk preset.', config: { roleAndPurpose: ['Answer support tickets.'], hasContextAndAudience: false } } });
    });

    it('answers 404 "Preset with ID <id> not found" for an unknown preset, read or applied', async () => {
      const read = await app.request('GET', `${PRESETS}/pre_nope`, { token: ALL });
      expect(read.status).toBe(404);
      expect(read.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Preset with ID pre_nope not found' });
      const apply = await call('POST', 'agt_p6', '/persona/preset/apply', { presetId: 'pre_nope' });
      expect(apply.status).toBe(404);
      expect(apply.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Preset with ID pre_nope not found' });
    });

    it('POST persona/preset/apply changes only the configuration (presetId set), no version generated', async () => {
      const A = 'agt_p6';
      const res = await call('POST', A, '/persona/preset/apply', { presetId: 'pre_support' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ status: 'success', message: expect.any(String), config: { roleAndPurpose: ['Answer support tickets.'], hasContextAndAudience: false, presetId: 'pre_support' } });
      expect((await call('GET', A, '/persona/versions')).body.versions).toEqual([]);
      // The configuration is the agent's: a later version carries it.
      await call('POST', A, '/persona/version', { persona: 'p' });
      expect((await call('GET', A, '/persona/version/1')).body.version.config).toEqual(res.body.config);
      const missing = await call('POST', A, '/persona/preset/apply', {});
      expect(missing.status).toBe(400);
      expect(missing.body).toEqual({ statusCode: 400, error: 'Bad Request', message: ['presetId is required'] });
    });
  });

  describe('enhance', () => {
    const A = 'agt_p7';

    it('POST enhance/website suggests from the agent\'s current persona and configuration, changing nothing', async () => {
      await call('POST', A, '/persona/preset/apply', { presetId: 'pre_receptionist' });
      await call('POST', A, '/persona/version', { persona: 'You are the front desk.' });
      const before = (await call('GET', A, '/persona/versions')).body;
      const res = await call('POST', A, '/enhance/website', { websiteUrl: 'https://clinic.example/about' });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body).sort()).toEqual(['suggestedConfig', 'suggestedPersona']);
      expect(res.body.suggestedPersona.startsWith('You are the front desk.')).toBe(true);
      expect(res.body.suggestedConfig).toMatchObject({ presetId: 'pre_receptionist', businessWebsite: 'https://clinic.example/about' });
      expect((await call('GET', A, '/persona/versions')).body).toEqual(before);
      expect(await app.store.sql.query("select action from audit_log where target_id = $1 and action like 'persona.%'", [A])).toHaveLength(2);
    });

    it('POST enhance/website refuses a websiteUrl that is missing or not an absolute http(s) URL', async () => {
      for (const websiteUrl of [undefined, 'clinic.example', 'ftp://clinic.example', '/about', 42]) {
        const res = await call('POST', A, '/enhance/website', websiteUrl === undefined ? {} : { websiteUrl });
        expect(res.status, String(websiteUrl)).toBe(400);
        expect(res.body.error).toBe('Bad Request');
        expect(res.body.message).toEqual([websiteUrl === undefined ? 'websiteUrl is required' : 'websiteUrl must be an absolute http: or https: URL']);
      }
      expect((await call('POST', A, '/enhance/website', { websiteUrl: 'http://clinic.example' })).status).toBe(201);
    });

    it('POST enhance/storytelling takes the body\'s currentPersona and currentConfig over the agent\'s', async () => {
      const res = await call('POST', A, '/enhance/storytelling', { currentPersona: 'Given persona.', currentConfig: { agentName: 'Given' } });
      expect(res.status).toBe(201);
      expect(res.body.suggestedPersona.startsWith('Given persona.')).toBe(true);
      expect(res.body.suggestedConfig).toEqual({ agentName: 'Given', personalityAndVoice: [expect.any(String)] });
    });

    it('POST enhance/instructions turns instructions and examples into a suggestion', async () => {
      const res = await call('POST', A, '/enhance/instructions', {
        instructions: 'Always confirm the date.',
        examples: [{ agentReply: 'Sure.', reason: 'too vague', expectedReply: 'Booked for Monday at 9.' }],
      });
      expect(res.status).toBe(201);
      expect(res.body.suggestedPersona.startsWith('You are the front desk.')).toBe(true);
      expect(res.body.suggestedPersona).toContain('Always confirm the date.');
      expect(res.body.suggestedConfig.rulesAndBoundaries).toEqual(expect.arrayContaining(['Always confirm the date.', expect.stringContaining('Booked for Monday at 9.')]));
      const bad = await call('POST', A, '/enhance/instructions', { examples: [{ agentReply: 'x' }] });
      expect(bad.status).toBe(400);
    });
  });
});
