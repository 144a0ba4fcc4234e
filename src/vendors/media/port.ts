/**
 * The media-room port: what the voice session route asks of a real-time media
 * server (a LiveKit server, livekit.ts; the in-process sandbox by default,
 * sandbox.ts): a room, and a token a client joins it with.
 *
 * Failures the family answers: `MediaUnavailable` (no complete answer in
 * time, a transport failure, a 5xx: 503 UPSTREAM_UNAVAILABLE) and
 * `MediaRejected` (a 4xx, passed through with its status).
 */

export interface MediaSession {
  /** Where the client connects (`wss://` or `ws://`). */
  url: string;
  roomName: string;
  /** A LiveKit access token (JWT, HS256) for `identity` in `roomName`. */
  token: string;
}

export class MediaUnavailable extends Error {}

export class MediaRejected extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export interface MediaRoomsPort {
  readonly name: string;
  /** Creates `roomName` and mints a token for `identity` (shown as `displayName`) to join it. */
  openSession(roomName: string, identity: string, displayName: string | undefined): Promise<MediaSession>;
}
