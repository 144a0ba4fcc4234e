/**
 * Where the ingest route hands accepted records: the embedded queue, or a Kafka producer
 * (kafka-sink.ts). A port the API and the composition roots share with the source side; it
 * imports nothing, so the API may import it without reaching the engine.
 */
export interface RecordSink {
  write(records: readonly { orgId: string; payload: string }[]): Promise<void>;
}
