/** Writes accepted records to the Kafka topic (key = orgId), for the ingest route and `logdrain produce`. */
// Before kafkajs: its record decoder and consumer batch are replaced as kafkajs first loads them
// (kafka-record-decoder.ts, kafka-batch.ts).
import './kafka-record-decoder.js';
import './kafka-batch.js';
import { Kafka, logLevel, CompressionTypes, type Producer } from 'kafkajs';
import type { RecordSink } from './sink.js';

export interface KafkaSink extends RecordSink {
  close(): Promise<void>;
}

export async function createKafkaSink(opts: { brokers: readonly string[]; topic: string; clientId?: string }): Promise<KafkaSink> {
  const kafka = new Kafka({ clientId: opts.clientId ?? 'logdrain-producer', brokers: [...opts.brokers], logLevel: logLevel.NOTHING });
  const producer: Producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  return {
    async write(records) {
      if (records.length === 0) return;
      await producer.send({
        topic: opts.topic,
        acks: -1,
        compression: CompressionTypes.None,
        messages: records.map((r) => ({ key: r.orgId, value: r.payload })),
      });
    },
    close: () => producer.disconnect(),
  };
}
