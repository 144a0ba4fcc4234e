/**
 * The real model-provider adapter (the `openai` package) against a local OpenAI-compatible server:
 * the routes' text comes from the model; a timeout, a refusal, a refused key and an unusable answer
 * each answer a clear error and store nothing. With a real provider, enhance/website reads the page
 * server-side through the SSRF-safe fetcher (public HTTPS only, every redirect hop checked).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../../../helpers/app.js';
import { startModelServer, type ModelServer } from '../../../helpers/model-server.js';
import { startReceiver, type HttpsReceiver } from '../../../helpers/receiver.js';
import { ALL, agentPath, PERSONA_SEED } from '../../../helpers/persona.js';

const TIMEOUT_MS = 400;

describe('persona routes with a real (OpenAI-compatible) model provider', () => {
  let app: TestApp;
  let model: ModelServer;
  let site: HttpsReceiver;

  beforeAll(async () => {
    model = await startModelServer();
    site = await startReceiver();
    app = await startApp({
      SEED_FILE: PERSONA_SEED,
      MODEL_PROVIDER_URL: model.url,
      MODEL_PROVIDER_API_KEY: 'sk-test-key',
      MODEL_PROVIDER_MODEL: 'test-model',
      MODEL_PROVIDER_TIMEOUT_MS: String(TIMEOUT_MS),
      MODEL_PROVIDER_MAX_OUTPUT_TOKENS: '300',
      WEBSITE_FETCH_ALLOW_HOSTS: 'localhost',
      NODE_EXTRA_CA_CERTS: site.caPath,
    });
  });
  afterAll(async () => {
    await app?.stop();
    await model?.close();
    await site?.close();
  });
  beforeEach(() => {
    model.behave({ kind: 'ok' });
    site.respondWith(undefined);
  });

  const call = (method: string, agentId: string, path: string, body?: unknown) =>
    app.request(method, `${agentPath(agentId)}${path}`, { token: ALL, ...(body !== undefined ? { body } : {}) });
  const stored = async (agentId: string) => ({
    versions: (await app.store.sql.query<{ n: number }>('select count(*)::int as n from persona_versions where agent_id = $1', [agentId]))[0]!.n,
    audit: (await app.store.sql.query<{ n: number }>("select count(*)::int as n from audit_log where target_id = $1 and action like 'persona.%'", [agentId]))[0]!.n,
  });

  it('generates through the configured endpoint, model, key and output bound, and stores the model\'s text', async () => {
    const res = await call('POST', 'agt_p11', '/persona', { agentName: 'Ada', businessType: 'bakery' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ status: 'success', message: expect.any(String), persona: 'Written by the model.', version: 1 });
    const sent = model.requests.at(-1)!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.authorization).toBe('Bearer sk-test-key');
    expect(sent.body.model).toBe('test-model');
    expect(sent.body.max_tokens).toBe(300);
    expect(sent.body.messages.at(-1)!.content).toContain('Ada');
  });

  it('drafts from the model, keeping the fields given as given and only known configuration fields of its answer', async () => {
    const res = await call('POST', 'agt_p11', '/persona/draft', { agentName: 'Ada', hasBusinessInfo: false });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      status: 'draft', message: expect.any(String), version: 2, versionStatus: 'draft', persona: 'Drafted by the model.',
      config: { roleAndPurpose: ['Extracted by the model.'], agentName: 'Ada', hasBusinessInfo: false },
    });
    const enhanced = await call('POST', 'agt_p11', '/enhance/storytelling', {});
    expect(enhanced.status).toBe(201);
    expect(enhanced.body).toEqual({ suggestedPersona: 'Suggested by the model.', suggestedConfig: { agentName: 'Model', rulesAndBoundaries: ['From the model.'] } });
    // The agent's current persona went to the model (omitted currentPersona defaults to it).
    expect(model.requests.at(-1)!.body.messages.at(-1)!.content).toContain('Written by the model.');
  });

  const failures: { what: string; behave: Parameters<ModelServer['behave']>[0]; status: number; body: Record<string, unknown> }[] = [
    {
      what: 'a timeout', behave: { kind: 'hang' }, status: 503,
      body: { statusCode: 503, error: 'Service Unavailable', code: 'VENDOR_UNAVAILABLE', message: 'The model provider did not answer in time.', vendor: 'model-provider', retryAfterSeconds: 30 },
    },
    {
      what: 'a refusal', behave: { kind: 'refusal', refusal: 'I cannot help with that.' }, status: 424,
      body: { statusCode: 424, error: 'Failed Dependency', code: 'PROVIDER_REJECTED', message: 'The model provider refused the request: I cannot help with that.', providerStatus: 200, reason: 'content_refused', keyOwner: 'platform', transient: false },
    },
    {
      what: 'a content filter', behave: { kind: 'content', content: '', finishReason: 'content_filter' }, status: 424,
      body: { statusCode: 424, error: 'Failed Dependency', code: 'PROVIDER_REJECTED', message: 'The model provider refused the request (content filter).', providerStatus: 200, reason: 'content_refused', keyOwner: 'platform', transient: false },
    },
    {
      what: 'a refused key', behave: { kind: 'status', status: 401 }, status: 424,
      body: { statusCode: 424, error: 'Failed Dependency', code: 'PROVIDER_REJECTED', message: 'The model provider rejected the request: the API key was refused (status 401).', providerStatus: 401, reason: 'invalid_api_key', keyOwner: 'platform', transient: false },
    },
    {
      what: 'an unknown model', behave: { kind: 'status', status: 404 }, status: 424,
      body: expect.objectContaining({ code: 'PROVIDER_REJECTED', reason: 'model_not_found', providerStatus: 404 }) as unknown as Record<string, unknown>,
    },
    {
      what: 'an exhausted quota', behave: { kind: 'status', status: 429, code: 'insufficient_quota' }, status: 424,
      body: expect.objectContaining({ code: 'PROVIDER_REJECTED', reason: 'quota_exhausted', providerStatus: 429 }) as unknown as Record<string, unknown>,
    },
    {
      what: 'a provider failure', behave: { kind: 'status', status: 500 }, status: 503,
      body: { statusCode: 503, error: 'Service Unavailable', code: 'VENDOR_UNAVAILABLE', message: 'The model provider failed (status 500).', vendor: 'model-provider', retryAfterSeconds: 30 },
    },
    {
      what: 'an answer that is not JSON', behave: { kind: 'content', content: 'Sure! Here is a persona: be nice.' }, status: 502,
      body: { statusCode: 502, error: 'Bad Gateway', code: 'PROVIDER_ANSWER_INVALID', message: "The model provider's answer could not be used: the answer is not a JSON object." },
    },
    {
      what: 'an answer without the field asked for', behave: { kind: 'content', content: '{"text": "wrong field"}' }, status: 502,
      body: expect.objectContaining({ code: 'PROVIDER_ANSWER_INVALID', message: expect.stringContaining('no non-empty "persona" string') }) as unknown as Record<string, unknown>,
    },
    {
      what: 'an answer cut off at the output bound', behave: { kind: 'content', content: '{"persona": "half', finishReason: 'length' }, status: 502,
      body: expect.objectContaining({ code: 'PROVIDER_ANSWER_INVALID', message: "The model provider's answer could not be used: the answer was cut off at the output bound (300 tokens)." }) as unknown as Record<string, unknown>,
    },
  ];

  for (const f of failures) {
    it(`${f.what}: a clear error, nothing stored, on generate, draft and enhance`, async () => {
      const A = 'agt_p12';
      const before = await stored(A);
      model.behave(f.behave);
      for (const [method, path, body] of [['POST', '/persona', { agentName: 'x' }], ['POST', '/persona/draft', {}], ['POST', '/enhance/instructions', { instructions: 'x' }]] as const) {
        const started = Date.now();
        const res = await call(method, A, path, body);
        expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(f.status);
        // The draft route asks for {persona, config}; the enhance route for the suggestion: only the generate message names the persona field.
        if (path === '/persona' || f.status !== 502) expect(res.body).toEqual(f.body);
        else expect(res.body).toMatchObject({ statusCode: 502, code: 'PROVIDER_ANSWER_INVALID' });
        if (f.behave.kind === 'hang') expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 3000);
      }
      expect(await stored(A)).toEqual(before);
    });
  }

  it('regenerating and publishing an empty draft fail without change when the model fails', async () => {
    const A = 'agt_p13';
    const draft = await call('POST', A, '/persona/draft', {});
    expect(draft.status).toBe(201);
    await app.store.sql.query(`update persona_versions set persona = '""'::jsonb where agent_id = $1`, [A]);
    model.behave({ kind: 'refusal', refusal: 'No.' });
    expect((await call('PUT', A, '/persona/draft', { agentName: 'x' })).status).toBe(424);
    expect((await call('POST', A, '/persona/publish', { version: draft.body.version })).status).toBe(424);
    const still = await call('GET', A, `/persona/version/${draft.body.version}`);
    expect(still.body.version).toMatchObject({ versionStatus: 'draft', persona: '', config: draft.body.config });
    model.behave({ kind: 'ok' });
    const published = await call('POST', A, '/persona/publish', { version: draft.body.version });
    expect(published.body).toMatchObject({ versionStatus: 'published', persona: 'Written by the model.' });
  });

  it('two draft creates racing while the model is slow leave one draft; the loser answers draft_exists', async () => {
    const A = 'agt_p14';
    model.behave({ kind: 'ok', delayMs: 150 });
    const askedBefore = model.requests.length;
    const [a, b] = await Promise.all([call('POST', A, '/persona/draft', { agentName: 'A' }), call('POST', A, '/persona/draft', { agentName: 'B' })]);
    expect([a.body.status, b.body.status].sort()).toEqual(['draft', 'draft_exists']);
    expect(a.body.version).toBe(b.body.version);
    expect(a.body.config).toEqual(b.body.config);
    const rows = await app.store.sql.query<{ version: number }>("select version from persona_versions where agent_id = $1 and status = 'draft'", [A]);
    expect(rows).toHaveLength(1);
    // Both requests passed the first look for a draft: the database's one-draft index settled it.
    expect(model.requests.slice(askedBefore).filter((r) => r.body.messages.at(-1)!.content.includes('"config"')).length).toBe(2);
  });

  describe('enhance/website reads the page server-side, safely', () => {
    it('sends the page\'s text to the model', async () => {
      site.respondWith((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' }).end('<html><head><script>secret()</script></head><body><h1>Fresh bread daily</h1><p>Open 7&nbsp;days.</p></body></html>');
        return true;
      });
      const res = await call('POST', 'agt_p11', '/enhance/website', { websiteUrl: `${site.url}/about` });
      expect(res.status).toBe(201);
      expect(res.body.suggestedPersona).toBe('Suggested by the model.');
      const prompt = model.requests.at(-1)!.body.messages.at(-1)!.content;
      expect(prompt).toContain('Fresh bread daily Open 7 days.');
      expect(prompt).not.toContain('secret()');
    });

    it('refuses a page that is not public HTTPS, before anything is fetched or the model asked', async () => {
      const asked = model.requests.length;
      const fetched = site.requests.length;
      for (const websiteUrl of ['http://localhost/about', `https://127.0.0.1:${site.port}/`, 'https://169.254.169.254/latest/meta-data', 'https://user:pw@localhost/']) {
        const res = await call('POST', 'agt_p11', '/enhance/website', { websiteUrl });
        expect(res.status, websiteUrl).toBe(422);
        expect(res.body).toMatchObject({ statusCode: 422, code: 'WEBSITE_NOT_FETCHABLE', field: 'websiteUrl', message: expect.stringMatching(/^The website could not be read: /) });
      }
      expect(model.requests.length).toBe(asked);
      expect(site.requests.length).toBe(fetched);
    });

    it('checks every redirect hop: a redirect to a private address is refused', async () => {
      site.respondWith((_req, res) => {
        res.writeHead(302, { location: `https://127.0.0.1:${site.port}/internal` }).end();
        return true;
      });
      const before = site.requests.length;
      const res = await call('POST', 'agt_p11', '/enhance/website', { websiteUrl: `${site.url}/moved` });
      expect(res.status).toBe(422);
      expect(res.body.message).toBe('The website could not be read: Destination address 127.0.0.1 is a loopback address.');
      expect(site.requests.length).toBe(before + 1);
    });

    it('answers a page that does not answer 2xx as not fetchable', async () => {
      site.respondWith((_req, res) => {
        res.writeHead(500).end('down');
        return true;
      });
      const res = await call('POST', 'agt_p11', '/enhance/website', { websiteUrl: `${site.url}/` });
      expect(res.status).toBe(422);
      expect(res.body.message).toBe('The website could not be read: the server answered 500.');
    });
  });
});
