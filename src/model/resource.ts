/**
 * The batch resource (spec 01 part 2.3): who emitted the records. A batch
 * carries exactly one resource, so records are grouped by the key below.
 */
import type { AgentRecord } from './record.js';

export type Resource = Record<string, string>;

export const resourceKey = (r: AgentRecord): string =>
  `${r.agentId}\u0000${r.agentName}\u0000${r.agentVersion ?? ''}\u0000${r.environment}`;

export function buildResource(r: AgentRecord, region: string | undefined): Resource {
  const res: Resource = {
    'service.name': r.agentName,
    'service.namespace': r.orgId,
    'service.instance.id': r.agentId,
  };
  if (r.agentVersion) res['service.version'] = r.agentVersion;
  res['deployment.environment.name'] = r.environment;
  res['gen_ai.agent.id'] = r.agentId;
  res['gen_ai.agent.name'] = r.agentName;
  if (region) res['cloud.region'] = region;
  res['svc.org.id'] = r.orgId;
  res['svc.agent.id'] = r.agentId;
  return res;
}
