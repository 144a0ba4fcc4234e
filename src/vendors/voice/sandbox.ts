/**
 * The in-process sandbox of the voice calls port, the embedded default
 * (contract telephony T6.5): every phone and meeting dispatch is placed; a
 * phone call gets a call id, a web room a join URL. No network.
 */
import { randomUUID } from 'node:crypto';
import type { DispatchRequest, DispatchResult, VoiceCallsPort } from './port.js';

export const SANDBOX_JOIN_BASE = 'https://voice.sandbox.invalid/join';

export function createSandboxVoiceCalls(): VoiceCallsPort {
  return {
    name: 'sandbox',
    async dispatch(req: DispatchRequest): Promise<DispatchResult> {
      switch (req.target.kind) {
        case 'phone':
          return { callId: `call_${randomUUID()}` };
        case 'meet':
          return {};
        case 'web':
          return { joinUrl: `${SANDBOX_JOIN_BASE}/${encodeURIComponent(req.roomName)}` };
      }
    },
  };
}
