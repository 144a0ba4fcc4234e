/**
 * The in-process media sandbox, the embedded default (contract telephony T7):
 * no server; a `wss://` URL and a LiveKit token of the same form as a real
 * server's, signed with a key and secret made when the process starts.
 */
import { randomBytes } from 'node:crypto';
import type { MediaRoomsPort, MediaSession } from './port.js';
import { participantToken } from './token.js';

export const SANDBOX_MEDIA_URL = 'wss://media.sandbox.invalid';

export function createSandboxMedia(): MediaRoomsPort & { readonly apiKey: string } {
  const apiKey = `sandbox-${randomBytes(6).toString('hex')}`;
  const apiSecret = randomBytes(32).toString('base64url');
  return {
    name: 'sandbox',
    apiKey,
    async openSession(roomName: string, identity: string, displayName: string | undefined): Promise<MediaSession> {
      return { url: SANDBOX_MEDIA_URL, roomName, token: await participantToken(apiKey, apiSecret, roomName, identity, displayName) };
    },
  };
}
