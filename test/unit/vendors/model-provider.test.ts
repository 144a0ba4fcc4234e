/**
 * The model-provider port's sandbox (contract P15-P17) and the configuration that selects the real
 * adapter (MODEL_PROVIDER_*, contract P18).
 */
import { describe, expect, it } from 'vitest';
import { createSandboxModelProvider } from '../../../src/vendors/model-provider/sandbox.js';
import { createModelProvider } from '../../../src/vendors/model-provider/index.js';
import { configOf } from '../../../src/vendors/model-provider/openai.js';
import { loadConfig } from '../../../src/config/config.js';
import type { PersonaConfig } from '../../../src/vendors/model-provider/port.js';

const sandbox = createSandboxModelProvider();
const value = <T>(r: { ok: true; value: T } | { ok: false }): T => {
  if (!r.ok) throw new Error('expected a value');
  return r.value;
};

describe('sandbox model provider', () => {
  it('is deterministic and names agentName in generated text', async () => {
    const a = value(await sandbox.generatePersona({ agentName: 'Ada', businessType: 'bakery' }));
    const b = value(await sandbox.generatePersona({ agentName: 'Ada', businessType: 'bakery' }));
    expect(a).toEqual(b);
    expect(a.persona).toContain('Ada');
    expect(value(await sandbox.generatePersona({})).persona.length).toBeGreaterThan(0);
  });

  it('drafts every string of each included section and none of an omitted one; an omitted switch includes', async () => {
    const config: PersonaConfig = {
      roleAndPurpose: ['r1', 'r2'], contextAndAudience: ['c1'], personalityAndVoice: ['p1'], rulesAndBoundaries: ['b1'], aboutProductsOrServices: ['a1'],
      hasContextAndAudience: false, hasBusinessInfo: false, hasRulesAndBoundaries: true,
    };
    const { persona, config: kept } = value(await sandbox.draftPersona({ config }));
    for (const s of ['r1', 'r2', 'p1', 'b1']) expect(persona).toContain(s);
    for (const s of ['c1', 'a1']) expect(persona).not.toContain(s);
    expect(kept).toEqual(config);
  });

  it('suggests a persona beginning with the current string persona, and never fetches', async () => {
    expect(sandbox.readsWebsites).toBe(false);
    const s = value(await sandbox.enhance({ kind: 'website', websiteUrl: 'https://x.example', currentPersona: 'Now.', currentConfig: {} }));
    expect(typeof s.suggestedPersona === 'string' && s.suggestedPersona.startsWith('Now.')).toBe(true);
    expect(s.suggestedConfig).toEqual({ businessWebsite: 'https://x.example' });
    const o = value(await sandbox.enhance({ kind: 'storytelling', currentPersona: { base: 'B' }, currentConfig: {} }));
    expect(o.suggestedPersona).toEqual({ base: 'B', text: expect.any(String) });
  });
});

describe('model provider configuration', () => {
  it('serves the sandbox with nothing set, the real adapter with URL, key and model', () => {
    expect(loadConfig({}).modelProvider).toBeUndefined();
    expect(createModelProvider(loadConfig({})).name).toBe('sandbox');
    const real = loadConfig({ MODEL_PROVIDER_URL: 'https://llm.example/v1', MODEL_PROVIDER_API_KEY: 'k', MODEL_PROVIDER_MODEL: 'm' });
    expect(real.modelProvider).toEqual({ baseUrl: 'https://llm.example/v1', apiKey: 'k', model: 'm', timeoutMs: 60_000, maxOutputTokens: 4096 });
    expect(createModelProvider(real).name).toBe('openai-compatible');
  });

  it('refuses a partial or malformed configuration, naming what is missing', () => {
    expect(() => loadConfig({ MODEL_PROVIDER_URL: 'https://llm.example/v1' })).toThrow(/MODEL_PROVIDER_API_KEY, MODEL_PROVIDER_MODEL must be set with MODEL_PROVIDER_URL/);
    expect(() => loadConfig({ MODEL_PROVIDER_URL: 'llm.example', MODEL_PROVIDER_API_KEY: 'k', MODEL_PROVIDER_MODEL: 'm' })).toThrow(/MODEL_PROVIDER_URL must be an http/);
    expect(() => loadConfig({ MODEL_PROVIDER_URL: 'https://l/v1', MODEL_PROVIDER_API_KEY: 'k', MODEL_PROVIDER_MODEL: 'm', MODEL_PROVIDER_TIMEOUT_MS: '0' })).toThrow(/MODEL_PROVIDER_TIMEOUT_MS/);
  });

  it('keeps only known configuration fields of the right types from a model\'s answer', () => {
    expect(configOf({ agentName: 'A', roleAndPurpose: ['x', 1], hasBusinessInfo: 'yes', voiceChips: [{ title: 'T', isEnabled: true }, { title: 2 }], other: 1 }))
      .toEqual({ agentName: 'A', roleAndPurpose: ['x'], voiceChips: [{ title: 'T', isEnabled: true }] });
    expect(configOf([])).toBeUndefined();
    expect(configOf(null)).toBeUndefined();
  });
});
