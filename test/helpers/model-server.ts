/**
 * A local OpenAI-compatible chat-completions server on 127.0.0.1 for the real model-provider
 * adapter's tests: it answers what the test sets (`behave`), records every request, and answers
 * valid JSON for the prompt's task by default.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Behaviour =
  | { kind: 'ok'; delayMs?: number }
  | { kind: 'content'; content: string; finishReason?: string }
  | { kind: 'refusal'; refusal: string }
  | { kind: 'status'; status: number; code?: string }
  | { kind: 'hang' };

export interface ModelRequest {
  path: string;
  authorization: string | undefined;
  body: { model: string; max_tokens?: number; messages: { role: string; content: string }[] };
}

export interface ModelServer {
  url: string;
  requests: ModelRequest[];
  behave(b: Behaviour): void;
  close(): Promise<void>;
}

/** The JSON the prompt asks for (the adapter names the shape in its last line). */
function answerFor(prompt: string): Record<string, unknown> {
  if (prompt.includes('"suggestedPersona"')) return { suggestedPersona: 'Suggested by the model.', suggestedConfig: { agentName: 'Model', rulesAndBoundaries: ['From the model.'] } };
  if (prompt.includes('"config"')) return { persona: 'Drafted by the model.', config: { roleAndPurpose: ['Extracted by the model.'], unknownField: 1 } };
  return { persona: 'Written by the model.' };
}

export async function startModelServer(): Promise<ModelServer> {
  let behaviour: Behaviour = { kind: 'ok' };
  const requests: ModelRequest[] = [];
  const open = new Set<ServerResponse>();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as ModelRequest['body'];
      requests.push({ path: req.url ?? '', authorization: req.headers.authorization, body });
      const b = behaviour;
      const completion = (message: Record<string, unknown>, finishReason = 'stop') =>
        JSON.stringify({ id: 'cmpl-1', object: 'chat.completion', created: 1, model: body.model, choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finishReason }] });
      const send = (status: number, text: string) => res.writeHead(status, { 'content-type': 'application/json' }).end(text);
      switch (b.kind) {
        case 'ok': {
          const prompt = body.messages?.at(-1)?.content ?? '';
          const go = () => send(200, completion({ content: JSON.stringify(answerFor(prompt)), refusal: null }));
          if (b.delayMs) setTimeout(go, b.delayMs);
          else go();
          return;
        }
        case 'content':
          return send(200, completion({ content: b.content, refusal: null }, b.finishReason));
        case 'refusal':
          return send(200, completion({ content: null, refusal: b.refusal }));
        case 'status':
          return send(b.status, JSON.stringify({ error: { message: 'refused by the test server', type: 'test', code: b.code ?? null } }));
        case 'hang':
          open.add(res);
          return;
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    behave: (b) => (behaviour = b),
    close: () =>
      new Promise((resolve) => {
        for (const r of open) r.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
