/** The model provider the configuration selects: the real OpenAI-compatible adapter when MODEL_PROVIDER_URL is set, else the sandbox. */
import type { Config } from '../../config/config.js';
import { createOpenAiModelProvider } from './openai.js';
import type { ModelProvider } from './port.js';
import { createSandboxModelProvider } from './sandbox.js';

export function createModelProvider(config: Pick<Config, 'modelProvider'>): ModelProvider {
  const real = config.modelProvider;
  return real ? createOpenAiModelProvider(real) : createSandboxModelProvider();
}

export type { ModelProvider } from './port.js';
