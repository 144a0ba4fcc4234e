/**
 * Vitest globalSetup: runs once in the main process before any test file.
 */
import { ensureMockBrokerBuilt } from './broker.js';

export default async function setup(): Promise<void> {
  // Compile the mock Kafka broker once, so parallel test files never race on cc.
  ensureMockBrokerBuilt();
}
