import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/config.js';

describe('loadConfig', () => {
  it('applies the CONTRACT defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      host: '0.0.0.0', port: 8080, metricsPort: 9464, databaseUrl: undefined, dataDir: './data', kafka: undefined,
      logDrainsEnabled: true, endpointAllowHosts: [], batch: { maxRecords: 1000, maxBytes: 1_048_576, lingerMs: 1000 },
      retry: { baseMs: 500, maxMs: 60_000 }, deliveryTimeoutMs: 10_000, bufferHorizonMs: 21_600_000, shutdownTimeoutMs: 30_000,
    });
    expect(Object.isFrozen(c.batch)).toBe(true);
  });

  it('reads Kafka and the switches', () => {
    const c = loadConfig({ KAFKA_BROKERS: 'a:9092, b:9092', KAFKA_TOPIC: 't', LOG_DRAINS_ENABLED: 'false', DRAIN_ENDPOINT_ALLOW_HOSTS: 'LocalHost,127.0.0.1' });
    expect(c.kafka).toEqual({ brokers: ['a:9092', 'b:9092'], topic: 't', groupId: 'logdrain-workers', sessionTimeoutMs: 30_000, heartbeatIntervalMs: 3000, fetchMaxWaitMs: 50 });
    expect(loadConfig({ KAFKA_BROKERS: 'a:9092', KAFKA_FETCH_MAX_WAIT_MS: '500' }).kafka?.fetchMaxWaitMs).toBe(500);
    expect(() => loadConfig({ KAFKA_BROKERS: 'a:9092', KAFKA_FETCH_MAX_WAIT_MS: '0' })).toThrow(/KAFKA_FETCH_MAX_WAIT_MS/);
    expect(c.logDrainsEnabled).toBe(false);
    expect(c.endpointAllowHosts).toEqual(['localhost', '127.0.0.1']);
  });

  it('reads the opt-in spill of small batches, off by default, its linger inside the backlog horizon', () => {
    expect(loadConfig({}).spill).toEqual({ belowRecords: 0, lingerMs: 30_000 });
    expect(loadConfig({ BATCH_SPILL_BELOW_RECORDS: '20', BATCH_SPILL_LINGER_MS: '10000' }).spill).toEqual({ belowRecords: 20, lingerMs: 10_000 });
    expect(() => loadConfig({ BATCH_SPILL_BELOW_RECORDS: '2000' })).toThrow(/BATCH_SPILL_BELOW_RECORDS must be at most BATCH_MAX_RECORDS/);
    expect(() => loadConfig({ BATCH_SPILL_BELOW_RECORDS: '5', BATCH_SPILL_LINGER_MS: '60000', BUFFER_HORIZON_MS: '100000' })).toThrow(/half of BUFFER_HORIZON_MS/);
    expect(() => loadConfig({ BATCH_SPILL_LINGER_MS: '10' })).toThrow(/BATCH_SPILL_LINGER_MS/);
  });

  it('holds at most 10,000 records in flight by default (each about 4 KB of the heap while held)', () => {
    expect(loadConfig({}).maxInFlightRecords).toBe(10_000);
    expect(loadConfig({ MAX_IN_FLIGHT_RECORDS: '20000' }).maxInFlightRecords).toBe(20_000);
    expect(() => loadConfig({ MAX_IN_FLIGHT_RECORDS: '99' })).toThrow(/MAX_IN_FLIGHT_RECORDS/);
  });

  it("reads V8's heap growth: twice the live size by default, 0 for V8's own choice", () => {
    expect(loadConfig({}).heapGrowingPercent).toBe(100);
    expect(loadConfig({ HEAP_GROWING_PERCENT: '0' }).heapGrowingPercent).toBe(0);
    expect(() => loadConfig({ HEAP_GROWING_PERCENT: '1001' })).toThrow(/HEAP_GROWING_PERCENT/);
    expect(() => loadConfig({ HEAP_GROWING_PERCENT: 'half' })).toThrow(/HEAP_GROWING_PERCENT/);
  });

  it('lists every problem at once', () => {
    try {
      loadConfig({ PORT: 'eighty', BATCH_MAX_RECORDS: '0', LOG_DRAINS_ENABLED: 'maybe', DATABASE_URL: 'mysql://x' });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      expect((e as ConfigError).problems).toHaveLength(4);
    }
  });

  it('reads TRUST_PROXY: off unless set; true, a hop count or proxy addresses and ranges; anything else refused', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 192.168.1.1,::1,loopback' }).trustProxy).toEqual(['10.0.0.0/8', '192.168.1.1', '::1', 'loopback']);
    for (const bad of ['0', 'everyone', '10.0.0.0/8,proxy.example.com']) expect(() => loadConfig({ TRUST_PROXY: bad }), bad).toThrow(/TRUST_PROXY/);
  });
});
