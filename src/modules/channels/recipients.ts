/**
 * The recipient rules of spec 03 part 4.2 (contract C6, C7): a recipient
 * holds exactly one of `userId`, `phoneNumber`, `email`, `conversationId`
 * (the route schema checks that much). `userId` works on every channel;
 * a raw `phoneNumber` cold-starts only `chatapp` and `sms`; a raw `email`
 * only `email`; `workchat`, `socialdm` and `socialmsg` are warm-only (the end
 * user must have written on that channel first; address by `userId`, or on
 * `workchat` by `conversationId`); `webchat` requires `userId`;
 * `conversationId` is `workchat` only. An end user is known to the agent
 * through the messages they wrote to it.
 */
import { refused } from './errors.js';
import type { Recipient, SendChannel } from './model.js';
import type { ChannelsRepo } from './repository.js';

export interface Resolved {
  /** The recorded end user; null for a number or address no end user wrote from, and for a conversation. */
  userId: string | null;
  /** The channel-native address sent to. */
  address: string;
  /** A conversation-scoped send is not recorded to the agent's memory. */
  conversationScoped: boolean;
}

const WARM_ONLY: ReadonlySet<SendChannel> = new Set(['workchat', 'socialdm', 'socialmsg']);

export async function resolveRecipient(repo: Pick<ChannelsRepo, 'newestFromUser' | 'newestFromAddress' | 'conversation'>, agentId: string, channel: SendChannel, to: Recipient): Promise<Resolved> {
  if (channel === 'webchat' && to.userId === undefined) throw refused('webchat requires a userId');
  if (to.conversationId !== undefined) {
    if (channel !== 'workchat') throw refused(`conversationId addresses only workchat, not ${channel}`);
    const conversation = await repo.conversation(agentId, to.conversationId);
    if (!conversation) throw refused(`Unknown conversationId ${to.conversationId} for this agent`);
    return { userId: null, address: to.conversationId, conversationScoped: true };
  }
  if (to.phoneNumber !== undefined) {
    if (channel !== 'chatapp' && channel !== 'sms') {
      throw refused(`A raw phoneNumber cold-starts only chatapp and sms; address ${channel} by userId${channel === 'workchat' ? ' or conversationId' : ''}`);
    }
    const known = await repo.newestFromAddress(agentId, channel, to.phoneNumber);
    return { userId: known?.userId ?? null, address: to.phoneNumber, conversationScoped: false };
  }
  if (to.email !== undefined) {
    if (channel !== 'email') throw refused(`A raw email reaches only the email channel, not ${channel}`);
    const known = await repo.newestFromAddress(agentId, 'email', to.email);
    return { userId: known?.userId ?? null, address: to.email, conversationScoped: false };
  }
  const userId = to.userId!;
  const anywhere = await repo.newestFromUser(agentId, userId);
  if (!anywhere) throw refused(`Unknown userId ${userId} for this agent`);
  const here = anywhere.channel === channel ? anywhere : await repo.newestFromUser(agentId, userId, channel);
  if (here) return { userId, address: here.address, conversationScoped: false };
  if (WARM_ONLY.has(channel)) throw refused(`${channel} is warm-only: the end user ${userId} has not written on ${channel} yet`);
  // Web chat reaches a known end user by their id; the others need an address on the channel.
  if (channel === 'webchat') return { userId, address: userId, conversationScoped: false };
  throw refused(`The end user ${userId} has no ${channel} address known to this agent`);
}
