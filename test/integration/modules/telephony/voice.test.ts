/** Voices and their versions (spec 02 parts 2.4, 3, 4.4, 5, 7, 8; contract telephony T2, T3, T6) through HTTP against the started service. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gzipSync } from 'node:zlib';
import type { TestApp } from '../../../helpers/app.js';
import { startTelephonyApp } from '../../../helpers/telephony.js';
import { createTestDatabase, type TestDatabase } from '../../../helpers/postgres.js';
import { startReceiver } from '../../../helpers/receiver.js';
import type { HttpsReceiver } from '../../../../src/devtools/https-receiver.js';

const SUPPORT = '/developer/voice-agents/agt_support';
const ALL = 'lk_tel_all';
const INFERENCE = { kind: 'inference', model: 'voice-model-1' };
/** A version body that passes every rule and provision-from-config's pairing (contract T6.2). */
const PIPELINE = { llm: INFERENCE, stt: { kind: 'inference', model: 'stt-1' }, tts: { kind: 'inference', model: 'tts-1', voice: 'alloy' } };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const BUNDLE = gzipSync(Buffer.from('export const tools = [];')).toString('base64');

describe('voice routes', () => {
  let app: TestApp;
  let seq = 0;
  beforeAll(async () => {
    app = await startTelephonyApp();
  });
  afterAll(async () => {
    await app?.stop();
  });

  const bad = (message: string | string[]) => ({ statusCode: 400, error: 'Bad Request', message });
  const voiceNotFound = { statusCode: 404, error: 'Not Found', message: 'Voice agent not found' };
  const create = (body: unknown, token = ALL, base = SUPPORT) => app.request('POST', base, { token, body });
  const voice = async (name = `voice-${++seq}`) => {
    const res = await create({ name });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { id: string; name: string };
  };
  const push = (voiceId: string, body: Record<string, unknown>, token = ALL) => app.request('POST', `${SUPPORT}/${voiceId}/version`, { token, body: { llm: INFERENCE, ...body } });
  const listOf = async (): Promise<any[]> => (await app.request('GET', SUPPORT, { token: ALL })).body.voices;

  describe('POST /developer/voice-agents/:agentId', () => {
    it('creates a voice (201): source cli, active, no published version', async () => {
      const res = await create({ name: 'Front_desk-1', description: 'Greets callers' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(/^voice_/), name: 'Front_desk-1', description: 'Greets callers', agentId: 'agt_support', active: true, source: 'cli',
        activeVersionId: null, createdBy: 'usr_ann', createdAt: expect.any(String), updatedAt: expect.any(String),
      });
      expect(new Date(res.body.createdAt).toISOString()).toBe(res.body.createdAt);
    });

    it('name: letters, digits, _ and -, at most 64, required; description at most 500', async () => {
      const rule = 'name must be 1 to 64 letters, digits, _ or -';
      for (const name of ['has space', 'dot.ted', '', 'x'.repeat(65), 'ünï']) {
        const res = await create({ name });
        expect(res.status, name).toBe(400);
        expect(res.body, name).toEqual(bad([rule]));
      }
      expect((await create({ name: 'x'.repeat(64) })).status).toBe(201);
      expect((await create({})).body).toEqual(bad(['name is required']));
      expect((await create({ name: 'ok-desc', description: 'd'.repeat(501) })).body).toEqual(bad(['description must be a string of at most 500 characters']));
      expect((await create({ name: 'ok-desc', description: 'd'.repeat(500) })).status).toBe(201);
      expect((await create({ name: 'ok-extra', color: 'red' })).body).toEqual(bad(['color is not a known field']));
    });

    it('a name is unique among the agent\'s active voices and reusable once deactivated', async () => {
      const first = await voice('reception');
      const again = await create({ name: 'reception' });
      expect(again.status).toBe(400);
      expect(again.body).toEqual(bad('A voice agent named "reception" already exists for this agent'));
      // Another agent's voices are its own.
      expect((await create({ name: 'reception' }, 'lk_globex_tel', '/developer/voice-agents/agt_globex')).status).toBe(201);
      expect((await app.request('DELETE', `${SUPPORT}/${first.id}`, { token: ALL })).status).toBe(200);
      const reused = await create({ name: 'reception' });
      expect(reused.status).toBe(201);
      expect(reused.body.id).not.toBe(first.id);
      // Two creations racing for one name: one wins.
      const [a, b] = await Promise.all([create({ name: 'racer' }), create({ name: 'racer' })]);
      expect([a.status, b.status].sort()).toEqual([201, 400]);
    });
  });

  describe('GET /developer/voice-agents/:agentId', () => {
    it('lists the agent\'s voices in creation order with every version and its bundle', async () => {
      const v = await voice();
      await push(v.id, { version: '1.0.0', bundle: BUNDLE, greeting: 'Hello', volume: 40 });
      await push(v.id, { version: '1.1.0' });
      await app.request('PUT', `${SUPPORT}/${v.id}/1.0.0/publish`, { token: ALL });
      const voices = await listOf();
      const mine = voices.find((x) => x.id === v.id);
      expect(mine).toMatchObject({ id: v.id, name: v.name, active: true, source: 'cli', activeVersionId: '1.0.0', agentId: 'agt_support' });
      expect(mine.versions.map((x: { version: string }) => x.version)).toEqual(['1.1.0', '1.0.0']);
      expect(mine.versions[1]).toEqual({
        id: expect.stringMatching(/^vver_/), version: '1.0.0', active: true, createdAt: expect.any(String), createdBy: 'usr_ann',
        llm: INFERENCE, bundle: BUNDLE, greeting: 'Hello', volume: 40,
      });
      expect(mine.versions[0].active).toBe(false);
      const created = voices.map((x) => x.createdAt);
      expect([...created].sort()).toEqual(created);
      expect((await app.request('GET', '/developer/voice-agents/agt_globex', { token: 'lk_globex_tel' })).body.voices.every((x: { agentId: string }) => x.agentId === 'agt_globex')).toBe(true);
    });

    it('404 Agent not found for a person on an agent that does not exist; a scoped key gets RESOURCE_NOT_PROJECTED', async () => {
      for (const token of ['sess_ann', 'lk_tel_legacy']) {
        const res = await app.request('GET', '/developer/voice-agents/agt_nowhere', { token });
        expect(res.status, token).toBe(404);
        expect(res.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Agent not found' });
        expect((await app.request('GET', '/developer/voice-agents/agt_globex', { token })).body.message).toBe('Agent not found');
      }
      const res = await app.request('GET', '/developer/voice-agents/agt_nowhere', { token: ALL });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 'RESOURCE_NOT_PROJECTED', resourceType: 'agent', resourceId: 'agt_nowhere' });
    });
  });

  describe('POST .../:voiceId/version', () => {
    it('pushes a version (201) carrying every configuration field sent', async () => {
      const v = await voice();
      const body = {
        version: '2.3.4-beta.1', description: 'Spring release', llm: { kind: 'plugin', provider: 'speech-a', class: 'LLM', options: { temperature: 0.2 } },
        stt: { kind: 'plugin', provider: 'speech-b', class: 'STTv2', options: {} }, tts: { kind: 'inference', model: 'tts-1', voice: 'nova', options: { speed: 1.1 } },
        vad: 'silero', vadOptions: { minSpeechDuration: 0.05, activationThreshold: 0.5 }, turnDetection: 'multilingual', greeting: 'Hi there',
        maxToolSteps: 5, userAwayTimeout: 15, preemptiveGeneration: true,
        interruption: { enabled: true, mode: 'adaptive', falseInterruptionTimeout: 2, resumeFalseInterruption: true, minDelay: 0.5, maxDelay: 0.5 },
        sttLanguage: 'en-US', hasInterruption: true, hasOnEnter: false, hasOnUserTurnCompleted: true, hasOnExit: false, hasTools: true,
        krispEnabled: true, persistTranscript: true, backgroundAudio: { ambient: 'office', thinking: [{ clip: 'keys', probability: 0.5 }] },
        volume: 100, pronunciations: { SQL: 'sequel' }, excludeTools: ['web_search'], bundle: BUNDLE,
      };
      const res = await app.request('POST', `${SUPPORT}/${v.id}/version`, { token: ALL, body });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body).toEqual({ ...body, id: expect.stringMatching(/^vver_/), createdBy: 'usr_ann', createdAt: expect.any(String), updatedAt: expect.any(String) });
      // Pushed, not running.
      expect((await listOf()).find((x) => x.id === v.id).activeVersionId).toBeNull();
    });

    it('404 Voice agent not found for an unknown voice or another agent\'s', async () => {
      const theirs = (await create({ name: 'globex-voice' }, 'lk_globex_tel', '/developer/voice-agents/agt_globex')).body;
      for (const id of ['voice_unknown', theirs.id]) {
        const res = await push(id, { version: '1.0.0' });
        expect(res.status).toBe(404);
        expect(res.body).toEqual(voiceNotFound);
      }
    });

    it('version: MAJOR.MINOR.PATCH with an optional -suffix, at most 100 characters; a version pushed twice is refused', async () => {
      const v = await voice();
      for (const version of ['0.0.1', '10.20.30', '1.0.0-rc.1', '1.0.0-alpha-2']) expect((await push(v.id, { version })).status, version).toBe(201);
      const long = `1.0.0-${'a'.repeat(94)}`;
      expect(long).toHaveLength(100);
      expect((await push(v.id, { version: long })).status).toBe(201);
      for (const version of ['1.2', 'v1.2.3', '1.2.3+build.5', '01.2.3', 'latest', '', '1.2.3-', `1.0.0-${'a'.repeat(95)}`]) {
        const res = await push(v.id, { version });
        expect(res.status, version).toBe(400);
        expect(res.body, version).toEqual(bad([`Invalid semantic version: ${version}`]));
      }
      expect((await push(v.id, {})).body).toEqual(bad(['version is required']));
      const dup = await push(v.id, { version: '0.0.1' });
      expect(dup.status).toBe(400);
      expect(dup.body).toEqual(bad(`Version 0.0.1 already exists for voice agent ${v.id}`));
    });

    it('pushes racing on one voice: each is written once with its entry; of two with one version, one is refused and the others are written', async () => {
      const v = await voice();
      const versions = [...Array.from({ length: 12 }, (_, i) => `3.${i}.0`), '3.0.0'];
      const answers = await Promise.all(versions.map((version) => push(v.id, { version, greeting: `hello ${version}` })));
      const refused = answers.filter((r) => r.status !== 201);
      expect(refused.map((r) => [r.status, r.body])).toEqual([[400, bad(`Version 3.0.0 already exists for voice agent ${v.id}`)]]);
      const listed = (await app.request('GET', `${SUPPORT}/${v.id}/versions`, { token: ALL })).body.versions as { version: string }[];
      expect(listed.map((x) => x.version).sort()).toEqual([...new Set(versions)].sort());
      const entries = await app.store.sql.query<{ details: { version: string; agentId: string } }>(
        "select details from audit_log where target_id = $1 and action = 'telephony.voice.version_pushed'", [v.id]);
      expect(entries.map((e) => e.details.version).sort()).toEqual([...new Set(versions)].sort());
      expect(new Set(entries.map((e) => e.details.agentId))).toEqual(new Set(['agt_support']));
    });

    it('a pushed version is in the voice list at once', async () => {
      const v = await voice();
      expect((await listOf()).find((x) => x.id === v.id).versions).toEqual([]);
      expect((await push(v.id, { version: '4.0.0' })).status).toBe(201);
      expect((await listOf()).find((x) => x.id === v.id).versions.map((x: { version: string }) => x.version)).toEqual(['4.0.0']);
    });

    it('checks every field individually: each failure names its rule', async () => {
      const v = await voice();
      const cases: [Record<string, unknown>, string[]][] = [
        [{ llm: undefined }, ['llm is required']],
        [{ llm: 'gpt' }, ['llm must be an object']],
        [{ llm: { kind: 'magic' } }, ['llm.kind must be one of inference, plugin, realtime']],
        [{ llm: { kind: 'inference' } }, ['llm.model is required when llm.kind is inference']],
        [{ llm: { kind: 'plugin', provider: 'speech-z', class: 'LLM', options: {} } }, ['llm.provider must be one of speech-a, speech-b when llm.kind is plugin']],
        [{ llm: { kind: 'plugin', provider: 'speech-a', class: 'ASR', options: {} } }, ['llm.class must be one of LLM, STT, STTv2, TTS when llm.kind is plugin']],
        [{ llm: { kind: 'plugin', provider: 'speech-a', class: 'LLM' } }, ['llm.options is required when llm.kind is plugin']],
        [{ llm: { kind: 'realtime', provider: 'model-d', options: {} } }, ['llm.provider must be one of model-a, model-b, model-c when llm.kind is realtime']],
        [{ stt: { kind: 'inference', model: '' } }, ['stt.model must be a non-empty string of at most 200 characters']],
        [{ tts: { kind: 'inference', model: 'm', pitch: 2 } }, ['tts.pitch is not a known field']],
        [{ description: 'd'.repeat(501) }, ['description must be a string of at most 500 characters']],
        [{ vad: 'v'.repeat(101) }, ['vad must be a string of at most 100 characters']],
        [{ turnDetection: 't'.repeat(101) }, ['turnDetection must be a string of at most 100 characters']],
        [{ sttLanguage: 's'.repeat(101) }, ['sttLanguage must be a string of at most 100 characters']],
        [{ greeting: 'g'.repeat(1001) }, ['greeting must be a string of at most 1,000 characters']],
        [{ maxToolSteps: -1 }, ['maxToolSteps must be an integer from 0 to 1000']],
        [{ maxToolSteps: 1.5 }, ['maxToolSteps must be an integer from 0 to 1000']],
        [{ userAwayTimeout: -3 }, ['userAwayTimeout must be a non-negative number of seconds']],
        [{ preemptiveGeneration: 'yes' }, ['preemptiveGeneration must be a boolean']],
        [{ krispEnabled: 1 }, ['krispEnabled must be a boolean']],
        [{ persistTranscript: 'true' }, ['persistTranscript must be a boolean']],
        [{ hasTools: null }, ['hasTools must be a boolean']],
        [{ interruption: { minDelay: 2, maxDelay: 1 } }, ['interruption.minDelay must not exceed interruption.maxDelay']],
        [{ interruption: { mode: 'always' } }, ['interruption.mode must be adaptive or vad']],
        [{ interruption: { minDelay: -1 } }, ['interruption.minDelay must be a non-negative number']],
        [{ volume: -0.5 }, ['volume must be a number from 0 to 100']],
        [{ volume: 100.5 }, ['volume must be a number from 0 to 100']],
        [{ pronunciations: { a: 1 } }, ['pronunciations must be an object of strings']],
        [{ pronunciations: { ['k'.repeat(257)]: 'v' } }, ['pronunciations keys must be at most 256 characters']],
        [{ pronunciations: { k: 'v'.repeat(1025) } }, ['pronunciations values must be at most 1,024 characters']],
        [{ excludeTools: 'web' }, ['excludeTools must be an array of at most 200 tool names']],
        [{ vadOptions: [] }, ['vadOptions must be an object']],
        [{ bundle: 'not base64!' }, ['bundle must be gzipped and base64-encoded']],
        [{ bundle: Buffer.from('plain text, not gzip').toString('base64') }, ['bundle must be gzipped and base64-encoded']],
        [{ tools: [] }, ['tools is not a known field']],
      ];
      let n = 0;
      for (const [fields, rules] of cases) {
        const res = await push(v.id, { version: `1.0.${n++}`, ...fields });
        expect(res.status, JSON.stringify(fields).slice(0, 80)).toBe(400);
        expect(res.body, JSON.stringify(fields).slice(0, 80)).toEqual(bad(rules));
      }
      // The limits themselves pass.
      const edge = {
        description: 'd'.repeat(500), vad: 'v'.repeat(100), turnDetection: 't'.repeat(100), sttLanguage: 's'.repeat(100), greeting: 'g'.repeat(1000),
        volume: 0, interruption: { minDelay: 1, maxDelay: 1 }, pronunciations: { ['k'.repeat(256)]: 'v'.repeat(1024) },
      };
      expect((await push(v.id, { version: '9.0.0', ...edge })).status).toBe(201);
      expect((await app.request('GET', `${SUPPORT}/${v.id}/versions`, { token: ALL })).body.versions.map((x: { version: string }) => x.version)).toEqual(['9.0.0']);
    });

    it('pronunciations at most 32 KB in total; bundle at most 10 MB of base64 (read from a body over 1 MB)', async () => {
      const v = await voice();
      // 32 entries of 1,024-character values with 2-character keys: 32 * 1,026 bytes > 32 KB.
      const over = Object.fromEntries(Array.from({ length: 32 }, (_, i) => [String(i).padStart(2, '0'), 'v'.repeat(1024)]));
      expect((await push(v.id, { version: '1.0.0', pronunciations: over })).body).toEqual(bad(['pronunciations must be at most 32 KB in total (keys and values, UTF-8)']));
      const under = Object.fromEntries(Array.from({ length: 31 }, (_, i) => [String(i).padStart(2, '0'), 'v'.repeat(1024)]));
      expect((await push(v.id, { version: '1.0.1', pronunciations: under })).status).toBe(201);
      // 7,864,320 bytes starting as gzip does: exactly 10 MiB of base64.
      const raw = Buffer.alloc(7_864_320, 7);
      raw[0] = 0x1f;
      raw[1] = 0x8b;
      const max = raw.toString('base64');
      expect(max).toHaveLength(10 * 1024 * 1024);
      const ok = await push(v.id, { version: '2.0.0', bundle: max });
      expect(ok.status).toBe(201);
      expect(ok.body.bundle).toHaveLength(max.length);
      const tooBig = Buffer.concat([raw, Buffer.alloc(3, 7)]).toString('base64');
      expect((await push(v.id, { version: '2.0.1', bundle: tooBig })).body).toEqual(bad(['bundle must be at most 10 MB']));
    });
  });

  describe('versions, publish, PUT, DELETE', () => {
    it('GET .../versions lists newest first; activeVersionId null until a publish; email and full name null', async () => {
      const v = await voice();
      const before = await app.request('GET', `${SUPPORT}/${v.id}/versions`, { token: ALL });
      expect(before.body).toEqual({ versions: [], activeVersionId: null });
      for (const version of ['1.0.0', '0.9.0', '1.1.0']) await push(v.id, { version });
      await app.request('PUT', `${SUPPORT}/${v.id}/0.9.0/publish`, { token: ALL });
      const res = await app.request('GET', `${SUPPORT}/${v.id}/versions`, { token: ALL });
      expect(res.status).toBe(200);
      expect(res.body.activeVersionId).toBe('0.9.0');
      expect(res.body.versions.map((x: { version: string }) => x.version)).toEqual(['1.1.0', '0.9.0', '1.0.0']);
      expect(res.body.versions[1]).toEqual({ version: '0.9.0', createdDate: expect.any(String), createdBy: 'usr_ann', isCurrent: true, createdByEmail: null, createdByFullName: null });
      expect(res.body.versions.filter((x: { isCurrent: boolean }) => x.isCurrent)).toHaveLength(1);
      expect((await app.request('GET', `${SUPPORT}/voice_unknown/versions`, { token: ALL })).body).toEqual(voiceNotFound);
    });

    it('publish answers 200 {message, voiceId, activeVersionId, publishedAt}; an unknown version is 404', async () => {
      const v = await voice();
      await push(v.id, { version: '1.0.0' });
      const res = await app.request('PUT', `${SUPPORT}/${v.id}/1.0.0/publish`, { token: ALL });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ message: `Version 1.0.0 published for voice agent ${v.id}`, voiceId: v.id, activeVersionId: '1.0.0', publishedAt: expect.any(String) });
      const missing = await app.request('PUT', `${SUPPORT}/${v.id}/3.0.0/publish`, { token: ALL });
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ statusCode: 404, error: 'Not Found', message: `Version 3.0.0 not found for voice agent ${v.id}` });
      expect((await app.request('PUT', `${SUPPORT}/voice_unknown/1.0.0/publish`, { token: ALL })).body).toEqual(voiceNotFound);
    });

    it('publish re-enables a deactivated voice, unless its name is now another active voice\'s', async () => {
      const v = await voice('comeback');
      await push(v.id, { version: '1.0.0' });
      await app.request('DELETE', `${SUPPORT}/${v.id}`, { token: ALL });
      const res = await app.request('PUT', `${SUPPORT}/${v.id}/1.0.0/publish`, { token: ALL });
      expect(res.status).toBe(200);
      expect((await listOf()).find((x) => x.id === v.id)).toMatchObject({ active: true, activeVersionId: '1.0.0' });
      await app.request('DELETE', `${SUPPORT}/${v.id}`, { token: ALL });
      await voice('comeback');
      const clash = await app.request('PUT', `${SUPPORT}/${v.id}/1.0.0/publish`, { token: ALL });
      expect(clash.body).toEqual(bad('A voice agent named "comeback" already exists for this agent'));
      expect((await listOf()).find((x) => x.id === v.id).active).toBe(false);
    });

    it('PUT renames, describes, enables and disables (200, no versions); names stay unique among active voices', async () => {
      const v = await voice();
      await push(v.id, { version: '1.0.0' });
      const res = await app.request('PUT', `${SUPPORT}/${v.id}`, { token: ALL, body: { name: `renamed-${seq}`, description: 'new words', active: false } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: v.id, name: `renamed-${seq}`, description: 'new words', active: false, agentId: 'agt_support' });
      expect(res.body.versions).toBeUndefined();
      expect((await app.request('PUT', `${SUPPORT}/${v.id}`, { token: ALL, body: { active: true } })).body.active).toBe(true);
      const other = await voice();
      const clash = await app.request('PUT', `${SUPPORT}/${other.id}`, { token: ALL, body: { name: `renamed-${seq - 1}` } });
      expect(clash.body).toEqual(bad(`A voice agent named "renamed-${seq - 1}" already exists for this agent`));
      expect((await app.request('PUT', `${SUPPORT}/${v.id}`, { token: ALL, body: { name: 'bad name' } })).body).toEqual(bad(['name must be 1 to 64 letters, digits, _ or -']));
      expect((await app.request('PUT', `${SUPPORT}/${v.id}`, { token: ALL, body: { active: 'no' } })).body).toEqual(bad(['active must be a boolean']));
      expect((await app.request('PUT', `${SUPPORT}/voice_unknown`, { token: ALL, body: { active: true } })).body).toEqual(voiceNotFound);
    });

    it('DELETE deactivates (200 {message, deleted: false, deactivated: true}); nothing is removed', async () => {
      const v = await voice();
      await push(v.id, { version: '1.0.0' });
      const res = await app.request('DELETE', `${SUPPORT}/${v.id}`, { token: ALL });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ message: `Voice agent ${v.id} deactivated`, deleted: false, deactivated: true });
      const listed = (await listOf()).find((x) => x.id === v.id);
      expect(listed).toMatchObject({ active: false });
      expect(listed.versions).toHaveLength(1);
      expect((await app.request('DELETE', `${SUPPORT}/voice_unknown`, { token: ALL })).body).toEqual(voiceNotFound);
      const actions = (await app.store.sql.query<{ action: string }>('select action from audit_log where target_id = $1 order by at, id', [v.id])).map((x) => x.action);
      expect(actions).toEqual(['telephony.voice.created', 'telephony.voice.version_pushed', 'telephony.voice.deactivated']);
    });
  });

  describe('POST .../provision-from-config', () => {
    const provision = (body: Record<string, unknown>) => app.request('POST', `${SUPPORT}/provision-from-config`, { token: ALL, body: { ...PIPELINE, ...body } });
    const boundVoice = async (msisdn: string) => (await app.store.sql.query<{ voice_id: string | null }>('select voice_id from telephony_phone_numbers where msisdn = $1', [msisdn]))[0]?.voice_id;

    it('creates a voice named after the number, pushes 1.0.0, publishes it and binds it (201 {voiceId, version})', async () => {
      const res = await provision({ msisdn: '+14155550123', greeting: 'Welcome' });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body).toEqual({ voiceId: expect.stringMatching(/^voice_/), version: '1.0.0' });
      const v = (await listOf()).find((x) => x.id === res.body.voiceId);
      expect(v).toMatchObject({ name: 'phone-14155550123', source: 'cli', active: true, activeVersionId: '1.0.0' });
      expect(v.versions[0]).toMatchObject({ version: '1.0.0', greeting: 'Welcome', llm: INFERENCE });
      expect(await boundVoice('14155550123')).toBe(res.body.voiceId);
      // Again: the voice is reused by name and the next patch version pushed.
      const again = await provision({ msisdn: '14155550123' });
      expect(again.body).toEqual({ voiceId: res.body.voiceId, version: '1.0.1' });
      expect((await listOf()).find((x) => x.id === res.body.voiceId).activeVersionId).toBe('1.0.1');
    });

    it('without msisdn: named phone-voice, nothing bound; the next patch follows the highest version', async () => {
      const res = await provision({});
      expect(res.status).toBe(201);
      const v = (await listOf()).find((x) => x.id === res.body.voiceId);
      expect(v.name).toBe('phone-voice');
      await push(res.body.voiceId, { version: '1.4.9-rc.1' });
      await push(res.body.voiceId, { version: '1.3.0' });
      expect((await provision({})).body).toEqual({ voiceId: res.body.voiceId, version: '1.4.9' });
    });

    it('400 Invalid voice config: ... on a field or pairing rule; nothing is created', async () => {
      const count = (await listOf()).length;
      const cases: [Record<string, unknown>, string][] = [
        [{ volume: 200 }, 'Invalid voice config: volume must be a number from 0 to 100'],
        [{ llm: undefined }, 'Invalid voice config: llm is required'],
        [{ name: 'bad name' }, 'Invalid voice config: name must be 1 to 64 letters, digits, _ or -'],
        [{ version: '1.0.0' }, 'Invalid voice config: version is not a known field'],
        [{ stt: undefined }, 'Invalid voice config: stt is required unless llm is realtime'],
        [{ llm: { kind: 'realtime', provider: 'model-a', options: {} } }, 'Invalid voice config: stt must be omitted when llm is realtime; tts must be omitted when llm is realtime in full mode'],
        [{ llm: { kind: 'realtime', provider: 'model-b', options: { mode: 'half' } }, stt: undefined, tts: undefined }, 'Invalid voice config: tts is required when llm is realtime in half mode'],
        [{ stt: { kind: 'plugin', provider: 'speech-a', class: 'TTS', options: {} } }, 'Invalid voice config: stt.class must be STT or STTv2'],
        [{ interruption: { minDelay: 3, maxDelay: 1 } }, 'Invalid voice config: interruption.minDelay must not exceed interruption.maxDelay'],
      ];
      for (const [fields, message] of cases) {
        const res = await provision(fields);
        expect(res.status, message).toBe(400);
        expect(res.body, message).toEqual(bad(message));
      }
      expect((await listOf()).length).toBe(count);
      const realtime = await provision({ name: 'realtime-full', llm: { kind: 'realtime', provider: 'model-c', options: {} }, stt: undefined, tts: undefined });
      expect(realtime.status).toBe(201);
    });

    it('rollback: when binding (the last step) fails, a voice it created is deactivated again', async () => {
      // 15550100999 is no number of Acme's.
      const res = await provision({ msisdn: '15550100999' });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Phone number not found or not active' });
      const v = (await listOf()).find((x) => x.name === 'phone-15550100999');
      expect(v).toMatchObject({ active: false });
      expect(await app.store.sql.query('select id from telephony_phone_numbers where voice_id = $1', [v.id])).toEqual([]);
      // Its name is free again.
      expect((await create({ name: 'phone-15550100999' })).status).toBe(201);
      const actions = (await app.store.sql.query<{ action: string }>('select action from audit_log where target_id = $1 order by at, id', [v.id])).map((x) => x.action);
      expect(actions).toEqual(['telephony.voice.created', 'telephony.voice.version_pushed', 'telephony.voice.published', 'telephony.voice.provision_rolled_back']);
    });

    it('rollback: a voice it reused gets its previous published version back (a suspended number cannot be bound)', async () => {
      const first = await provision({ name: 'main-line' });
      expect(first.body.version).toBe('1.0.0');
      await app.request('POST', '/developer/orgs/org_acme/phone-numbers', { token: ALL, body: { msisdn: '15550100777' } });
      await app.request('POST', '/developer/orgs/org_acme/phone-numbers/15550100777/suspend', { token: ALL });
      const res = await provision({ name: 'main-line', msisdn: '15550100777' });
      expect(res.status).toBe(404);
      expect(res.body.message).toBe('Phone number not found or not active');
      const v = (await listOf()).find((x) => x.id === first.body.voiceId);
      expect(v).toMatchObject({ active: true, activeVersionId: '1.0.0' });
      expect(await boundVoice('15550100777')).toBeNull();
      await app.request('POST', '/developer/orgs/org_acme/phone-numbers/15550100777/reactivate', { token: ALL });
      expect((await provision({ name: 'main-line', msisdn: '15550100777' })).body).toEqual({ voiceId: first.body.voiceId, version: '1.0.2' });
      expect(await boundVoice('15550100777')).toBe(first.body.voiceId);
      // Another organization's number is not the agent's organization's.
      const globex = await provision({ name: 'main-line', msisdn: '15550100000' });
      expect(globex.status).toBe(404);
      expect((await listOf()).find((x) => x.id === first.body.voiceId).activeVersionId).toBe('1.0.2');
    });
  });

  describe('POST .../dispatch', () => {
    const DIALER = '/developer/voice-agents/agt_dialer';
    const dispatch = (body: unknown, token = ALL, base = SUPPORT) => app.request('POST', `${base}/dispatch`, { token, body });
    const audited = async (sessionId: string) =>
      (await app.store.sql.query<{ target_id: string; details: Record<string, unknown> }>(`select target_id, details from audit_log where action = 'telephony.voice.dispatched' and details->>'sessionId' = $1`, [sessionId]))[0];
    let firstActive: { id: string; name: string };
    beforeAll(async () => {
      firstActive = (await listOf()).find((v) => v.active) ?? (await voice());
    });

    it('phone shorthand: 201 {sessionId, roomName svc-voice-<sessionId>, callId}; the first active voice; threadId and channel defaults', async () => {
      const res = await dispatch({ to: '+14155550100' });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body).toEqual({ sessionId: expect.stringMatching(UUID), roomName: `svc-voice-${res.body.sessionId}`, callId: expect.any(String) });
      const a = await audited(res.body.sessionId);
      expect(a?.target_id).toBe(firstActive.id);
      expect(a?.details).toMatchObject({ kind: 'phone', channel: 'phone', threadId: `voice:${res.body.sessionId}`, callId: res.body.callId });
      const phone = await dispatch({ to: { kind: 'phone', number: '+14155550101' }, threadId: 'thread-7', channel: 'chatapp', context: { customer: 'c-1' } });
      expect(phone.status).toBe(201);
      expect((await audited(phone.body.sessionId))?.details).toMatchObject({ channel: 'chatapp', threadId: 'thread-7' });
    });

    it('meet: 201 without callId, channel meeting; web: 201 with joinUrl, channel webchat', async () => {
      const meet = await dispatch({ to: { kind: 'meet', url: 'https://meet.example.test/abc-defg-hij' } });
      expect(meet.status).toBe(201);
      expect(meet.body).toEqual({ sessionId: expect.stringMatching(UUID), roomName: `svc-voice-${meet.body.sessionId}` });
      expect((await audited(meet.body.sessionId))?.details).toMatchObject({ kind: 'meet', channel: 'meeting' });
      for (const to of [{ kind: 'web' }, { kind: 'web', returnToken: true }]) {
        const web = await dispatch({ to });
        expect(web.status).toBe(201);
        expect(web.body).toEqual({ sessionId: expect.stringMatching(UUID), roomName: `svc-voice-${web.body.sessionId}`, joinUrl: expect.any(String) });
        expect(() => new URL(web.body.joinUrl)).not.toThrow();
        expect((await audited(web.body.sessionId))?.details).toMatchObject({ kind: 'web', channel: 'webchat' });
      }
    });

    it('refuses bad fields: to, meeting URL 2,048, returnToken false, context 16 KB, threadId 100, voice 64, channel', async () => {
      const cases: [Record<string, unknown>, string[]][] = [
        [{}, ['to is required']],
        [{ to: '14155550100' }, ['to must be an E.164 phone number (+ and digits)']],
        [{ to: 42 }, ['to must be an E.164 phone number or an object {kind: phone | meet | web}']],
        [{ to: { kind: 'fax', number: '+14155550100' } }, ['to must be an E.164 phone number or an object {kind: phone | meet | web}']],
        [{ to: { kind: 'phone', number: 'x', callerId: '123' } }, ['to.number must be an E.164 phone number (+ and digits)', 'to.callerId must be an E.164 phone number (+ and digits)']],
        [{ to: { kind: 'meet', url: `https://meet.example.test/${'a'.repeat(2049 - 'https://meet.example.test/'.length)}` } }, ['to.url must be a URL of at most 2,048 characters']],
        [{ to: { kind: 'meet', url: 'not a url' } }, ['to.url must be a URL of at most 2,048 characters']],
        [{ to: { kind: 'web', returnToken: false } }, ['to.returnToken must be true when given']],
        [{ to: { kind: 'web', extra: 1 } }, ['to.extra is not a known field']],
        [{ to: '+14155550100', context: { blob: 'x'.repeat(16 * 1024) } }, ['context must be at most 16 KB serialized']],
        [{ to: '+14155550100', context: 'text' }, ['context must be an object']],
        [{ to: '+14155550100', threadId: 't'.repeat(101) }, ['threadId must be a non-empty string of at most 100 characters']],
        [{ to: '+14155550100', voice: 'v'.repeat(65) }, ['voice must be a voice id or name of at most 64 characters']],
        [{ to: '+14155550100', channel: 'pigeon' }, ['channel must be one of phone, meeting, chatapp, webchat, unknown']],
        [{ to: '+14155550100', when: 'now' }, ['when is not a known field']],
      ];
      for (const [body, rules] of cases) {
        const res = await dispatch(body);
        expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
        expect(res.body, JSON.stringify(body).slice(0, 80)).toEqual(bad(rules));
      }
      const edge = await dispatch({ to: { kind: 'meet', url: `https://meet.example.test/${'a'.repeat(2048 - 'https://meet.example.test/'.length)}` }, threadId: 't'.repeat(100), context: { blob: 'x'.repeat(16 * 1024 - 12) } });
      expect(edge.status, JSON.stringify(edge.body)).toBe(201);
    });

    it('a threadId the store cannot hold is refused before the budget: 400 naming it, no place taken, nothing recorded', async () => {
      const spent = async () => [
        await app.store.sql.query(`select id, at, answered from telephony_dispatches where agent_id = 'agt_support' order by id`),
        await app.store.sql.query(`select count(*)::int as n from audit_log where action = 'telephony.voice.dispatched'`),
      ];
      const before = await spent();
      for (const threadId of ['thread\u0000one', 'thread-\ud800', '\udc00x']) {
        const res = await dispatch({ to: '+14155550100', threadId });
        expect(res.status, JSON.stringify(threadId)).toBe(400);
        expect(JSON.stringify(res.body.message), JSON.stringify(threadId)).toContain('threadId');
      }
      expect(await spent()).toEqual(before);
    });

    it('voice by id or by name; a deactivated, missing or other agent\'s voice is 403; no active voice is 400', async () => {
      const v = await voice();
      const byId = await dispatch({ to: '+14155550100', voice: v.id });
      expect(byId.status).toBe(201);
      expect((await audited(byId.body.sessionId))?.target_id).toBe(v.id);
      const byName = await dispatch({ to: '+14155550100', voice: v.name });
      expect((await audited(byName.body.sessionId))?.target_id).toBe(v.id);
      await app.request('DELETE', `${SUPPORT}/${v.id}`, { token: ALL });
      const theirs = (await create({ name: `g-${seq}` }, 'lk_globex_tel', '/developer/voice-agents/agt_globex')).body;
      for (const ref of [v.id, v.name, 'no-such-voice', theirs.id]) {
        const res = await dispatch({ to: '+14155550100', voice: ref });
        expect(res.status, ref).toBe(403);
        expect(res.body, ref).toEqual({ statusCode: 403, error: 'Forbidden', message: `Voice "${ref}" not active on agent agt_support (deactivated, missing, or owned by a different agent).` });
      }
      // agt_sales has no voice at all.
      const none = await dispatch({ to: '+14155550100' }, 'sess_ann', '/developer/voice-agents/agt_sales');
      expect(none.status).toBe(400);
      expect(none.body).toEqual(bad('Agent agt_sales has no active LuaVoice configured. Push a voice before dispatching.'));
    });

    it('callerId must be an active number of the agent\'s organization: 403 otherwise', async () => {
      const ok = await dispatch({ to: { kind: 'phone', number: '+14155550100', callerId: '+14155550123' } });
      expect(ok.status).toBe(201);
      await app.request('POST', '/developer/orgs/org_acme/phone-numbers', { token: ALL, body: { msisdn: '15550100778' } });
      await app.request('POST', '/developer/orgs/org_acme/phone-numbers/15550100778/suspend', { token: ALL });
      // Unowned, Globex's, and Acme's suspended number.
      for (const callerId of ['+15550100998', '+15550100000', '+15550100778']) {
        const res = await dispatch({ to: { kind: 'phone', number: '+14155550100', callerId } });
        expect(res.status, callerId).toBe(403);
        expect(res.body, callerId).toEqual({ statusCode: 403, error: 'Forbidden', message: 'Caller ID is not authorized for this agent.' });
      }
    });

    it('needs telephony:provision on the agent by its exact name', async () => {
      for (const token of ['lk_tel_wild', 'lk_tel_write', 'lk_tel_read', 'sess_mo']) {
        const res = await dispatch({ to: '+14155550100' }, token);
        expect(res.status, token).toBe(403);
        expect(res.body, token).toMatchObject({ code: 'INSUFFICIENT_SCOPE', requiredScope: 'telephony:provision', resourceType: 'agent', resourceId: 'agt_support' });
      }
      for (const token of ['lk_tel_provision', 'sess_ann', 'lk_tel_legacy']) expect((await dispatch({ to: '+14155550100' }, token)).status, token).toBe(201);
      expect((await dispatch({ to: '+14155550100' }, 'lk_globex_tel')).body).toMatchObject({ code: 'RESOURCE_NOT_PROJECTED', resourceType: 'agent' });
    });

    it('100 dispatches per agent per minute: the next is 429 with the spec\'s message; other agents are unaffected', async () => {
      await create({ name: 'dialer' }, ALL, DIALER);
      for (let i = 0; i < 100; i++) {
        const res = await dispatch({ to: '+14155550100' }, ALL, DIALER);
        expect(res.status, `dispatch ${i + 1}`).toBe(201);
      }
      const refused = await dispatch({ to: '+14155550100' }, ALL, DIALER);
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({
        statusCode: 429, error: 'Too Many Requests', code: 'RATE_LIMITED', message: 'Voice dispatch rate limit exceeded for agent agt_dialer (100/min)',
        retryAfterSeconds: expect.any(Number),
      });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(refused.body.retryAfterSeconds).toBeLessThanOrEqual(60);
      // Refused requests and field failures do not place calls.
      const placed = await app.store.sql.query<{ n: number }>(`select count(*)::int as n from audit_log where action = 'telephony.voice.dispatched' and details->>'agentId' = 'agt_dialer'`);
      expect(placed[0]!.n).toBe(100);
      expect((await dispatch({ to: '+14155550100' })).status).toBe(201);
    });
  });

  describe('scopes on the agent in the path (spec 02 part 5; contract telephony T2)', () => {
    const KEYS: Record<string, readonly string[]> = {
      lk_tel_read: ['telephony:read'], lk_tel_write: ['telephony:write'], lk_tel_manage: ['telephony:manage'], lk_tel_provision: ['telephony:provision'],
      lk_tel_wild: ['telephony:read', 'telephony:write', 'telephony:manage'], lk_tel_none: [],
      sess_mo: ['telephony:read', 'telephony:write', 'telephony:manage'],
    };
    const routes = (voiceId: string): { method: string; path: string; scope: string; body?: unknown }[] => [
      { method: 'GET', path: SUPPORT, scope: 'telephony:read' },
      { method: 'POST', path: SUPPORT, scope: 'telephony:write', body: { name: 'bad name' } },
      { method: 'POST', path: `${SUPPORT}/${voiceId}/version`, scope: 'telephony:write', body: { version: 'x', llm: INFERENCE } },
      { method: 'GET', path: `${SUPPORT}/${voiceId}/versions`, scope: 'telephony:read' },
      { method: 'PUT', path: `${SUPPORT}/${voiceId}/9.9.9/publish`, scope: 'telephony:write' },
      { method: 'PUT', path: `${SUPPORT}/${voiceId}`, scope: 'telephony:write', body: { name: 'bad name' } },
      { method: 'DELETE', path: `${SUPPORT}/voice_unknown`, scope: 'telephony:manage' },
      { method: 'POST', path: `${SUPPORT}/provision-from-config`, scope: 'telephony:write', body: { volume: 500 } },
    ];

    it('grants each route to its scope only: 403 INSUFFICIENT_SCOPE on the agent otherwise; nothing changes', async () => {
      const v = await voice();
      const snapshot = async () => [await app.store.sql.query('select * from telephony_voices order by id'), await app.store.sql.query('select id from telephony_voice_versions order by id')];
      const before = await snapshot();
      for (const r of routes(v.id)) {
        for (const [key, held] of Object.entries(KEYS)) {
          const res = await app.request(r.method, r.path, { token: key, ...(r.body !== undefined ? { body: r.body } : {}) });
          const what = `${key} ${r.method} ${r.path}`;
          if (held.includes(r.scope)) {
            expect(res.status, what).not.toBe(403);
            expect(res.status, what).toBeLessThan(500);
          } else {
            expect(res.status, what).toBe(403);
            expect(res.body, what).toMatchObject({ statusCode: 403, code: 'INSUFFICIENT_SCOPE', requiredScope: r.scope, resourceType: 'agent', resourceId: 'agt_support' });
          }
        }
      }
      expect(await snapshot()).toEqual(before);
    });

    it('another organization\'s agent, or a private one without a grant: RESOURCE_NOT_PROJECTED, nothing read or changed', async () => {
      const v = await voice();
      const before = await app.store.sql.query('select * from telephony_voices order by id');
      for (const r of routes(v.id)) {
        const res = await app.request(r.method, r.path, { token: 'lk_globex_tel', ...(r.body !== undefined ? { body: r.body } : {}) });
        expect(res.status, `${r.method} ${r.path}`).toBe(403);
        expect(res.body, `${r.method} ${r.path}`).toMatchObject({ code: 'RESOURCE_NOT_PROJECTED', resourceType: 'agent', resourceId: 'agt_support' });
      }
      const priv = await app.request('GET', '/developer/voice-agents/agt_sales', { token: ALL });
      expect(priv.body).toMatchObject({ code: 'RESOURCE_NOT_PROJECTED', resourceType: 'agent', resourceId: 'agt_sales' });
      // A person of the organization sees its private agents.
      expect((await app.request('GET', '/developer/voice-agents/agt_sales', { token: 'sess_ann' })).status).toBe(200);
      expect(await app.store.sql.query('select * from telephony_voices order by id')).toEqual(before);
    });
  });
});

describe('the dispatch limit across two API instances of one Postgres store', () => {
  let db: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    db = await createTestDatabase();
    a = await startTelephonyApp({ DATABASE_URL: db.url }, 'serve');
    b = await startTelephonyApp({ DATABASE_URL: db.url }, 'serve');
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await db?.drop();
  });

  it('100 dispatches of one agent a minute in all: what one instance placed counts on the other', async () => {
    const base = '/developer/voice-agents/agt_dialer';
    expect((await a.request('POST', base, { token: ALL, body: { name: 'shared' } })).status).toBe(201);
    const send = (app: TestApp) => app.request('POST', `${base}/dispatch`, { token: ALL, body: { to: '+14155550100' } });
    // The ledger is the store's: what one instance placed counts on the other at once.
    for (let i = 0; i < 60; i++) expect((await send(a)).status, `a ${i + 1}`).toBe(201);
    for (let i = 0; i < 40; i++) expect((await send(b)).status, `b ${i + 1}`).toBe(201);
    for (const app of [a, b]) {
      const res = await send(app);
      expect(res.status).toBe(429);
      expect(res.body.message).toBe('Voice dispatch rate limit exceeded for agent agt_dialer (100/min)');
    }
  });
});

describe('POST /developer/voice/:agentId/session', () => {
  const SESSION = '/developer/voice/agt_support/session';
  const KEY = 'lk-test-key';
  const SECRET = 'lk-test-secret-0123456789abcdef0123456789';
  let upstream: HttpsReceiver;
  let sandbox: TestApp;
  let livekit: TestApp;
  let refused: TestApp;
  beforeAll(async () => {
    upstream = await startReceiver();
    sandbox = await startTelephonyApp({}, 'serve');
    livekit = await startTelephonyApp({
      VOICE_MEDIA_URL: upstream.url, VOICE_MEDIA_API_KEY: KEY, VOICE_MEDIA_API_SECRET: SECRET,
      NODE_EXTRA_CA_CERTS: upstream.caPath, VOICE_MEDIA_TIMEOUT_MS: '1500',
    }, 'serve');
    // Nothing listens on port 1 of the loopback: every connection is refused.
    refused = await startTelephonyApp({ VOICE_MEDIA_URL: 'http://127.0.0.1:1', VOICE_MEDIA_API_KEY: KEY, VOICE_MEDIA_API_SECRET: SECRET }, 'serve');
  });
  afterAll(async () => {
    await sandbox?.stop();
    await livekit?.stop();
    await refused?.stop();
    await upstream?.close();
  });

  const open = (app: TestApp, body: unknown = {}, token = ALL) => app.request('POST', SESSION, { token, body });
  const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8'));

  it('sandbox: 201 {url (wss), roomName, token, participantIdentity, agentName}; the token a LiveKit access token for that room', async () => {
    const res = await open(sandbox, { userId: 'usr-42', displayName: 'Ann' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toEqual({ url: expect.stringMatching(/^wss:\/\//), roomName: expect.stringMatching(/^svc-voice-/), token: expect.any(String), participantIdentity: 'usr-42', agentName: 'support-bot' });
    const header = JSON.parse(Buffer.from(res.body.token.split('.')[0], 'base64url').toString('utf8'));
    expect(header.alg).toBe('HS256');
    expect(claimsOf(res.body.token)).toMatchObject({ sub: 'usr-42', name: 'Ann', iss: expect.stringMatching(/^sandbox-/), video: { room: res.body.roomName, roomJoin: true } });
    // Without a userId: a synthetic identity; no body at all is the defaults.
    const anon = await open(sandbox, { channel: 'web' });
    expect(anon.body.participantIdentity).toMatch(/^web-/);
    expect((await sandbox.request('POST', SESSION, { token: ALL })).status).toBe(201);
  });

  it('refuses a channel other than web, an unknown voice, unknown fields; needs telephony:write on the agent', async () => {
    for (const channel of ['phone', 'webchat']) {
      const res = await open(sandbox, { channel });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ statusCode: 400, error: 'Bad Request', message: "channel must be 'web' for developer voice sessions" });
    }
    expect((await open(sandbox, { voiceId: 'voice_unknown' })).body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Voice agent not found' });
    expect((await open(sandbox, { room: 'x' })).body.message).toEqual(['room is not a known field']);
    for (const token of ['lk_tel_read', 'lk_tel_manage', 'lk_tel_provision']) {
      const res = await open(sandbox, {}, token);
      expect(res.status, token).toBe(403);
      expect(res.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', requiredScope: 'telephony:write', resourceType: 'agent' });
    }
    expect((await sandbox.request('POST', '/developer/voice/agt_nowhere/session', { token: 'sess_ann', body: {} })).body.message).toBe('Agent not found');
  });

  it('LiveKit: creates the room through RoomService (bearer token with roomCreate) and answers a token LiveKit\'s SDK verifies', async () => {
    upstream.respondWith((req, res) => {
      if (req.path !== '/twirp/livekit.RoomService/CreateRoom') return;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ name: JSON.parse(req.body.toString()).name, sid: 'RM_1' }));
      return true;
    });
    const before = upstream.requests.length;
    const res = await open(livekit, { userId: 'usr-7', displayName: 'Seven' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.url).toBe(upstream.url.replace(/^https/, 'wss'));
    const { TokenVerifier } = await import('livekit-server-sdk');
    const verifier = new TokenVerifier(KEY, SECRET);
    const claims = await verifier.verify(res.body.token);
    expect(claims).toMatchObject({ iss: KEY, sub: 'usr-7', name: 'Seven', video: { room: res.body.roomName, roomJoin: true } });
    await expect(new TokenVerifier(KEY, 'another-secret-0123456789abcdef0123').verify(res.body.token)).rejects.toThrow();
    const call = upstream.requests.slice(before).find((r) => r.path === '/twirp/livekit.RoomService/CreateRoom')!;
    expect(call.method).toBe('POST');
    expect(JSON.parse(call.body.toString())).toEqual({ name: res.body.roomName });
    const bearer = String(call.headers.authorization).replace(/^Bearer /, '');
    expect(await verifier.verify(bearer)).toMatchObject({ iss: KEY, video: { roomCreate: true } });
  });

  it('LiveKit: a 4xx passes through with its msg; a 5xx, a hang past the bound and a refused connection are 503 UPSTREAM_UNAVAILABLE', async () => {
    upstream.respondWith((_req, res) => {
      res.writeHead(403, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 'permission_denied', msg: 'no permissions to create a room' }));
      return true;
    });
    const denied = await open(livekit);
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ statusCode: 403, error: 'Forbidden', message: 'no permissions to create a room' });
    upstream.respondWith((_req, res) => {
      res.writeHead(429).end('slow down');
      return true;
    });
    expect((await open(livekit)).status).toBe(429);
    const unavailable = { statusCode: 503, error: 'Service Unavailable', code: 'UPSTREAM_UNAVAILABLE', message: 'UPSTREAM_UNAVAILABLE', requestId: expect.any(String), retryAfterSeconds: 5 };
    upstream.respondWith((_req, res) => {
      res.writeHead(500).end('{"msg":"internal"}');
      return true;
    });
    expect((await open(livekit)).body).toEqual(unavailable);
    // Headers and then nothing: the whole answer is bounded, not only its start.
    upstream.respondWith((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"name":');
      return true;
    });
    const started = Date.now();
    const hung = await open(livekit);
    expect(hung.status).toBe(503);
    expect(hung.body).toEqual(unavailable);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
    expect(Date.now() - started).toBeLessThan(10_000);
    const refusedRes = await open(refused);
    expect(refusedRes.body).toEqual(unavailable);
    upstream.respondWith(undefined);
  });
});
