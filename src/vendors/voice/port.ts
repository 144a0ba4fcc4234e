/**
 * The voice calls port: what the telephony family asks of the media and
 * telephony platform when it dispatches a voice agent (an outbound phone
 * call, joining a meeting, or a web room). The adapter is chosen in
 * src/vendors/index.ts; the embedded default is the in-process sandbox.
 */

export interface PhoneLeg {
  kind: 'phone';
  /** E.164 with `+`. */
  number: string;
  /** E.164 with `+`: a number of the agent's organization (checked by the family). */
  callerId?: string | undefined;
}
export interface MeetLeg {
  kind: 'meet';
  url: string;
}
export interface WebLeg {
  kind: 'web';
}
export type DispatchTarget = PhoneLeg | MeetLeg | WebLeg;

export interface DispatchRequest {
  sessionId: string;
  /** `svc-voice-<sessionId>`. */
  roomName: string;
  agentId: string;
  voiceId: string;
  target: DispatchTarget;
}

/** What the platform answers: the provider's call id for a phone call, a join URL for a web room. */
export interface DispatchResult {
  callId?: string;
  joinUrl?: string;
}

export interface VoiceCallsPort {
  readonly name: string;
  dispatch(req: DispatchRequest): Promise<DispatchResult>;
}
