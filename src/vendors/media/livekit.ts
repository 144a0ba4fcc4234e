/**
 * A LiveKit server as the media-room port (contract telephony T7): the room
 * through its RoomService (`POST <url>/twirp/livekit.RoomService/CreateRoom`,
 * `{"name": <room>}`, bearer a LiveKit token with `roomCreate`: what the SDK's
 * RoomServiceClient.createRoom sends), bounded to `timeoutMs` for the whole
 * answer; the participant token minted with livekit-server-sdk. HTTPS trusts
 * the system roots and NODE_EXTRA_CA_CERTS.
 */
import { rootCertificates } from 'node:tls';
import { Agent, fetch } from 'undici';
import type { VoiceMediaConfig } from '../../config/config.js';
import { MediaRejected, MediaUnavailable, type MediaRoomsPort, type MediaSession } from './port.js';
import { participantToken, roomServiceToken } from './token.js';

export function createLiveKitMedia(cfg: VoiceMediaConfig, opts: { timeoutMs: number; extraCaCerts?: string | undefined }): MediaRoomsPort & { close(): Promise<void> } {
  const dispatcher = new Agent({ connect: { ca: opts.extraCaCerts !== undefined ? [...rootCertificates, opts.extraCaCerts] : [...rootCertificates] } });
  const wsUrl = cfg.url.replace(/^http/, 'ws');

  async function createRoom(roomName: string): Promise<void> {
    const signal = AbortSignal.timeout(opts.timeoutMs);
    let status: number;
    let text: string;
    try {
      const res = await fetch(`${cfg.url}/twirp/livekit.RoomService/CreateRoom`, {
        method: 'POST',
        headers: { authorization: `Bearer ${await roomServiceToken(cfg.apiKey, cfg.apiSecret)}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: roomName }),
        signal,
        dispatcher,
      });
      status = res.status;
      // The whole answer within the bound, body included.
      text = await res.text();
    } catch (e) {
      throw new MediaUnavailable(signal.aborted ? `the media server did not answer within ${opts.timeoutMs} ms` : `the media server could not be reached: ${(e as Error).message}`);
    }
    if (status >= 200 && status < 300) return;
    if (status >= 400 && status < 500) {
      let message = `the media server refused the room (${status})`;
      try {
        const body = JSON.parse(text) as { msg?: unknown };
        if (typeof body.msg === 'string' && body.msg !== '') message = body.msg;
      } catch {
        /* not JSON: the status says it */
      }
      throw new MediaRejected(status, message);
    }
    throw new MediaUnavailable(`the media server failed (${status})`);
  }

  return {
    name: 'livekit',
    async openSession(roomName: string, identity: string, displayName: string | undefined): Promise<MediaSession> {
      await createRoom(roomName);
      return { url: wsUrl, roomName, token: await participantToken(cfg.apiKey, cfg.apiSecret, roomName, identity, displayName) };
    },
    async close() {
      await dispatcher.close();
    },
  };
}
