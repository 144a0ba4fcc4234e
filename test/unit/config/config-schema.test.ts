/**
 * The configuration schema: a bad value of each kind is refused naming its variable, every
 * variable's declared default is what an empty environment reads, the result is frozen, and the
 * families' slices are the ones their modules declare.
 */
import { readFileSync } from 'node:fs';
import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { ConfigError, configSchema, loadConfig, parseConfig, type ConfigIssue } from '../../../src/config/config.js';
import { bool, envVariables, readEnv } from '../../../src/config/env-schema.js';
import { DRAIN_TYPES } from '../../../src/destinations/index.js';
import { channelsConfigSchema } from '../../../src/modules/channels/config.js';
import { drainsConfigSchema } from '../../../src/modules/drains/config.js';
import { workflowsConfigSchema } from '../../../src/modules/workflows/config.js';

function issuesOf(env: Record<string, string>): ConfigIssue[] {
  const r = parseConfig(env);
  if (r.ok) throw new Error(`accepted ${JSON.stringify(env)}`);
  expect(r.error).toBeInstanceOf(ConfigError);
  expect(r.error.code).toBe('CONFIG_INVALID');
  return [...r.error.issues];
}

describe('configuration schema', () => {
  it.each([
    ['a value of the wrong type', { WORKFLOW_EXECUTOR_SLOTS: 'eight' }, 'WORKFLOW_EXECUTOR_SLOTS', 'type'],
    ['a boolean that is none', { WORKFLOW_EXECUTOR: 'maybe' }, 'WORKFLOW_EXECUTOR', 'type'],
    ['a value out of bounds', { SANDBOX_RECEIPT_STEP_MS: '2001' }, 'SANDBOX_RECEIPT_STEP_MS', 'bound'],
    ['a value under its minimum', { PORT: '-1' }, 'PORT', 'bound'],
    ['a value outside its set', { LOG_LEVEL: 'loud' }, 'LOG_LEVEL', 'enum'],
    ['a list item outside its set', { DRAIN_TYPES_ENABLED: 'http,fax' }, 'DRAIN_TYPES_ENABLED', 'enum'],
    ['a value of the wrong form', { EMAIL_FROM: 'nobody' }, 'EMAIL_FROM', 'format'],
    ['half of a group', { VOICE_MEDIA_URL: 'https://media.example' }, 'VOICE_MEDIA_API_KEY', 'relation'],
  ] as const)('refuses %s, naming the variable', (_what, env, variable, kind) => {
    const issues = issuesOf(env);
    expect(issues).toEqual([expect.objectContaining({ variable, kind })]);
    expect(issues[0]!.message).toContain(variable);
    expect(() => loadConfig(env)).toThrow(ConfigError);
  });

  it('reports every bad variable of one environment at once', () => {
    const issues = issuesOf({ PORT: 'x', WORKFLOW_POLL_MS: '1', TELEPHONY_CARRIER: 'carrier-x', RETRY_BASE_MS: '5000', RETRY_MAX_MS: '1000' });
    expect(issues.map((i) => [i.variable, i.kind])).toEqual([['PORT', 'type'], ['TELEPHONY_CARRIER', 'enum'], ['WORKFLOW_POLL_MS', 'bound'], ['RETRY_MAX_MS', 'relation']]);
  });

  it('reads every variable at its declared default from an empty environment', () => {
    const c = loadConfig({}) as unknown as Record<string, unknown>;
    // Values made into more than their text: the Kafka group (undefined without brokers), the CA
    // file's content, the decoded key, the sunset instant, the trusted proxies, and the groups that are all or none.
    const derived = /^(kafka\.|extraCaCerts$|encryptionKey$|deprecatedScopesSunset$|trustProxy$|modelProvider\.|voiceMedia\.)/;
    const read = envVariables(configSchema).filter((v) => !derived.test(v.path));
    expect(read.length).toBeGreaterThan(60);
    for (const v of read) {
      const value = v.path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], c);
      expect(value, v.env).toEqual(v.default);
    }
    expect(c).toMatchObject({ kafka: undefined, kafkaTopic: 'agent-logs', modelProvider: undefined, voiceMedia: undefined, deprecatedScopesSunset: new Date('2027-06-30T00:00:00Z'), trustProxy: false });
    expect((c.drains as { typesEnabled: string[] }).typesEnabled).toEqual([...DRAIN_TYPES]);
    expect((c.workflows as { slots: number }).slots).toBe(8);
  });

  it('reads a set value over its default', () => {
    const c = loadConfig({ WORKFLOW_EXECUTOR_SLOTS: '3', WORKFLOW_EXECUTOR: 'off', CHANNEL_SWEEP_INTERVAL_MS: '0', DRAIN_TYPES_ENABLED: 'otlp', VENDOR_B_HOSTS: 'Intake.Example' });
    expect(c.workflows).toMatchObject({ slots: 3, executor: false });
    expect(c.channels.sweepIntervalMs).toBe(0);
    expect(c.drains).toMatchObject({ typesEnabled: ['otlp'], vendorBHosts: ['intake.example'] });
  });

  it('hands out a configuration frozen all the way down', () => {
    const c = loadConfig({ KAFKA_BROKERS: 'a:9092' });
    for (const part of [c, c.workflows, c.workflows.rateLimits, c.channels, c.drains, c.drains.typesEnabled, c.kafka, c.kafka!.brokers, c.batch]) {
      expect(Object.isFrozen(part)).toBe(true);
    }
    expect(() => { (c.workflows as { slots: number }).slots = 1; }).toThrow(TypeError);
    expect(() => { (c.drains.typesEnabled as string[]).push('x'); }).toThrow(TypeError);
  });

  it("composes the families' slices as their modules declare them, the drain types from the destinations", () => {
    expect(configSchema.properties.workflows).toBe(workflowsConfigSchema);
    expect(configSchema.properties.channels).toBe(channelsConfigSchema);
    expect(configSchema.properties.drains).toBe(drainsConfigSchema);
    expect(drainsConfigSchema.properties.typesEnabled.items.enum).toEqual([...DRAIN_TYPES]);
  });

  it('names each variable once, each with a description', () => {
    const vars = envVariables(configSchema);
    expect(new Set(vars.map((v) => v.env)).size).toBe(vars.length);
    expect(vars.filter((v) => v.description.length < 8).map((v) => v.env)).toEqual([]);
  });

  it('reads a variable from a one-line entry', () => {
    const schema = Type.Object({ trusted: bool('EXAMPLE_SWITCH', false, 'an example switch') });
    const issues: ConfigIssue[] = [];
    expect(readEnv(schema, {}, issues)).toEqual({ trusted: false });
    expect(readEnv(schema, { EXAMPLE_SWITCH: 'yes' }, issues)).toEqual({ trusted: true });
    expect(issues).toEqual([]);
    readEnv(schema, { EXAMPLE_SWITCH: 'perhaps' }, issues);
    expect(issues).toEqual([{ variable: 'EXAMPLE_SWITCH', kind: 'type', message: 'EXAMPLE_SWITCH must be true or false, got "perhaps"' }]);
  });

  it('knows every variable a command-line flag sets (src/cli.ts)', () => {
    const cli = readFileSync(new URL('../../../src/cli.ts', import.meta.url), 'utf8');
    const flags = [...cli.matchAll(/env: '([A-Z0-9_]+)'/g)].map((m) => m[1]!);
    expect(flags.length).toBeGreaterThan(5);
    const read = new Set(envVariables(configSchema).map((v) => v.env));
    expect(flags.filter((f) => !read.has(f))).toEqual([]);
  });
});
