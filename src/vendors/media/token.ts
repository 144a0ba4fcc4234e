/**
 * LiveKit access tokens (livekit-server-sdk's AccessToken): JWT HS256, `iss` the API key, `sub` the
 * identity. The package is loaded with the first token, not with the process: a worker never mints
 * one, and its load costs a process some 8 MB of memory.
 */
const sdk = () => import('livekit-server-sdk');

/** A participant's token for `roomName`: video grant `{room, roomJoin: true}`. */
export async function participantToken(apiKey: string, apiSecret: string, roomName: string, identity: string, name: string | undefined): Promise<string> {
  const { AccessToken } = await sdk();
  const at = new AccessToken(apiKey, apiSecret, { identity, ...(name !== undefined ? { name } : {}), ttl: '1h' });
  at.addGrant({ room: roomName, roomJoin: true });
  return at.toJwt();
}

/** The server-side token of a RoomService call: video grant `{roomCreate: true}`, short-lived. */
export async function roomServiceToken(apiKey: string, apiSecret: string): Promise<string> {
  const { AccessToken } = await sdk();
  const at = new AccessToken(apiKey, apiSecret, { ttl: '2m' });
  at.addGrant({ roomCreate: true });
  return at.toJwt();
}
