/**
 * The rules of a version's fields that one field's schema cannot state
 * (spec 02 part 4.4's table), and provision-from-config's pairing rules
 * between `llm`, `stt` and `tts`. Each answers the failed rules in words;
 * the caller decides the answer (field validation on a version push,
 * `Invalid voice config: ...` on provision-from-config).
 */
import semver from 'semver';
import { LIMITS } from './schemas.js';

export const SPEECH_VENDORS = ['speech-a', 'speech-b'] as const;
export const MODEL_VENDORS = ['model-a', 'model-b', 'model-c'] as const;
export const PLUGIN_CLASSES = ['LLM', 'STT', 'STTv2', 'TTS'] as const;

interface ModelForm {
  kind: 'inference' | 'plugin' | 'realtime';
  model?: string | undefined;
  provider?: string | undefined;
  class?: string | undefined;
  options?: Record<string, unknown> | undefined;
  voice?: string | undefined;
}

export interface VersionConfig {
  llm: ModelForm;
  stt?: ModelForm | undefined;
  tts?: ModelForm | undefined;
  interruption?: { minDelay?: number | undefined; maxDelay?: number | undefined } | undefined;
  pronunciations?: Record<string, string> | undefined;
  bundle?: string | undefined;
}

/**
 * `MAJOR.MINOR.PATCH` with an optional `-suffix` (a semver prerelease), at most 100 characters, as the
 * semver package parses it strictly: no leading `v` or `=`, no build metadata.
 */
export function isVersion(v: string): boolean {
  if (v.length === 0 || v.length > LIMITS.versionChars) return false;
  const parsed = semver.parse(v, { loose: false });
  return parsed !== null && parsed.version === v && parsed.build.length === 0;
}

/** The version after the highest of `versions` by semver precedence, a patch step up; `1.0.0` for none. */
export function nextPatch(versions: readonly string[]): string {
  const valid = versions.filter((v) => semver.valid(v) !== null);
  if (valid.length === 0) return '1.0.0';
  const highest = semver.rsort([...valid])[0]!;
  return semver.inc(highest, 'patch')!;
}

function modelRules(field: string, m: ModelForm | undefined): string[] {
  if (m === undefined) return [];
  const rules: string[] = [];
  switch (m.kind) {
    case 'inference':
      if (m.model === undefined) rules.push(`${field}.model is required when ${field}.kind is inference`);
      if (m.provider !== undefined || m.class !== undefined) rules.push(`${field} of kind inference takes model and options only`);
      break;
    case 'plugin':
      if (!(SPEECH_VENDORS as readonly string[]).includes(m.provider ?? '')) rules.push(`${field}.provider must be one of ${SPEECH_VENDORS.join(', ')} when ${field}.kind is plugin`);
      if (!(PLUGIN_CLASSES as readonly string[]).includes(m.class ?? '')) rules.push(`${field}.class must be one of ${PLUGIN_CLASSES.join(', ')} when ${field}.kind is plugin`);
      if (m.options === undefined) rules.push(`${field}.options is required when ${field}.kind is plugin`);
      if (m.model !== undefined) rules.push(`${field} of kind plugin takes no model`);
      break;
    case 'realtime':
      if (!(MODEL_VENDORS as readonly string[]).includes(m.provider ?? '')) rules.push(`${field}.provider must be one of ${MODEL_VENDORS.join(', ')} when ${field}.kind is realtime`);
      if (m.options === undefined) rules.push(`${field}.options is required when ${field}.kind is realtime`);
      if (m.model !== undefined || m.class !== undefined) rules.push(`${field} of kind realtime takes provider and options only`);
      break;
  }
  return rules;
}

const utf8 = (s: string): number => Buffer.byteLength(s, 'utf8');

/** Base64 (standard alphabet, padded) whose bytes start as gzip does (1f 8b). */
function isGzipBase64(s: string): boolean {
  if (s.length === 0 || s.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(s)) return false;
  const head = Buffer.from(s.slice(0, 8), 'base64');
  return head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;
}

/** Every field rule of a version body beyond its schema's, each failed one in words. */
export function configRules(c: VersionConfig): string[] {
  const rules = [...modelRules('llm', c.llm), ...modelRules('stt', c.stt), ...modelRules('tts', c.tts)];
  const i = c.interruption;
  if (i?.minDelay !== undefined && i.maxDelay !== undefined && i.minDelay > i.maxDelay) rules.push('interruption.minDelay must not exceed interruption.maxDelay');
  if (c.pronunciations !== undefined) {
    let total = 0;
    for (const [k, v] of Object.entries(c.pronunciations)) {
      total += utf8(k) + utf8(v);
      if (k.length > LIMITS.pronunciationKey) {
        rules.push(`pronunciations keys must be at most ${LIMITS.pronunciationKey} characters`);
        break;
      }
      if (v.length > LIMITS.pronunciationValue) {
        rules.push(`pronunciations values must be at most ${LIMITS.pronunciationValue.toLocaleString('en-US')} characters`);
        break;
      }
    }
    if (total > LIMITS.pronunciationsBytes) rules.push('pronunciations must be at most 32 KB in total (keys and values, UTF-8)');
  }
  if (c.bundle !== undefined) {
    if (c.bundle.length > LIMITS.bundleChars) rules.push('bundle must be at most 10 MB');
    else if (!isGzipBase64(c.bundle)) rules.push('bundle must be gzipped and base64-encoded');
  }
  return rules;
}

/**
 * provision-from-config's pairing of the pipeline: a realtime `llm` takes no `stt`, and no `tts` in full
 * mode (its `options.mode` absent or `full`; `half` pairs it with a `tts`); any other `llm` needs an
 * `stt` and a `tts`. A plugin's class matches its place (LLM for llm, STT or STTv2 for stt, TTS for tts).
 */
export function pairingRules(c: VersionConfig): string[] {
  const rules: string[] = [];
  if (c.llm.kind === 'realtime') {
    if (c.stt !== undefined) rules.push('stt must be omitted when llm is realtime');
    const half = c.llm.options?.mode === 'half';
    if (!half && c.tts !== undefined) rules.push('tts must be omitted when llm is realtime in full mode');
    if (half && c.tts === undefined) rules.push('tts is required when llm is realtime in half mode');
  } else {
    if (c.stt === undefined) rules.push('stt is required unless llm is realtime');
    if (c.tts === undefined) rules.push('tts is required unless llm is realtime');
  }
  const place = (field: string, m: ModelForm | undefined, classes: readonly string[]) => {
    if (m?.kind === 'plugin' && m.class !== undefined && !classes.includes(m.class)) rules.push(`${field}.class must be ${classes.join(' or ')}`);
    if (m?.kind === 'realtime' && field !== 'llm') rules.push(`${field} cannot be realtime`);
  };
  place('llm', c.llm, ['LLM']);
  place('stt', c.stt, ['STT', 'STTv2']);
  place('tts', c.tts, ['TTS']);
  return rules;
}
