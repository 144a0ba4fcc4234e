/**
 * Vitest globalSetup: runs once in the main process before any test file.
 */
import { ensureMockBrokerBuilt } from './broker.js';
import { ensureSelfSignedCertificate } from '../../src/devtools/self-signed.js';
import { CERT_DIR } from './receiver.js';

export default async function setup(): Promise<void> {
  // Compile the mock Kafka broker once, so parallel test files never race on cc.
  ensureMockBrokerBuilt();
  // Likewise the receiver's certificate: made once, read by every file.
  ensureSelfSignedCertificate(CERT_DIR);
}
