import * as m001 from './001-initial.js';
import * as m002 from './002-rate-limits.js';
import * as m003 from '../../modules/drains/migrations/003-backlog.js';
import * as m004 from './004-agent-logs.js';
import * as m005 from '../../modules/drains/migrations/005-dropped-record-ids.js';
import * as m006 from '../../modules/drains/migrations/006-backlog-parked-at.js';
import * as m007 from '../../modules/drains/migrations/007-backlog-by-resource.js';
import * as m008 from '../../modules/drains/migrations/008-drain-config-version.js';
import * as m009 from './009-agent-logs-org-key.js';
import * as m010 from './010-idempotency-keys.js';
import * as m011 from './011-rate-limits-unlogged.js';
import * as m012 from '../../modules/drains/migrations/012-drain-probes.js';
import * as m013 from './013-audit-by-target-type.js';
import * as m014 from './014-ingest-queue-pending.js';
import * as m015 from './015-agent-logs-skill-index.js';
import * as m016 from './016-agents-base-agent.js';
import * as m018 from './018-agent-logs-org-first-key.js';
import * as m020 from '../../modules/drains/migrations/020-drain-replays.js';
import * as m021 from '../../modules/drains/migrations/021-drain-circuits.js';
import * as m022 from '../../modules/drains/migrations/022-drain-hourly-reasons.js';
import * as m023 from '../../modules/drains/migrations/023-backlog-pages.js';
import * as m024 from './024-agent-log-pages.js';

/** Ordered migrations; ids never change once released. */
export const migrations: readonly { id: string; sql: string }[] = [
  { id: '001-initial', sql: m001.sql },
  { id: '002-rate-limits', sql: m002.sql },
  { id: '003-backlog', sql: m003.sql },
  { id: '004-agent-logs', sql: m004.sql },
  { id: '005-dropped-record-ids', sql: m005.sql },
  { id: '006-backlog-parked-at', sql: m006.sql },
  { id: '007-backlog-by-resource', sql: m007.sql },
  { id: '008-drain-config-version', sql: m008.sql },
  { id: '009-agent-logs-org-key', sql: m009.sql },
  { id: '010-idempotency-keys', sql: m010.sql },
  { id: '011-rate-limits-unlogged', sql: m011.sql },
  { id: '012-drain-probes', sql: m012.sql },
  { id: '013-audit-by-target-type', sql: m013.sql },
  { id: '014-ingest-queue-pending', sql: m014.sql },
  { id: '015-agent-logs-skill-index', sql: m015.sql },
  { id: '016-agents-base-agent', sql: m016.sql },
  { id: '018-agent-logs-org-first-key', sql: m018.sql },
  { id: '020-drain-replays', sql: m020.sql },
  { id: '021-drain-circuits', sql: m021.sql },
  { id: '022-drain-hourly-reasons', sql: m022.sql },
  { id: '023-backlog-pages', sql: m023.sql },
  { id: '024-agent-log-pages', sql: m024.sql },
];
