package io.msgcontract.kafka;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The Confluent wire format of Protobuf serializers: magic byte 0, the schema
 * id as 4 bytes big-endian, the message-index array (its length and then each
 * index as zig-zag varints; the common [0], the file's first message, is the
 * single byte 0), then the protobuf bytes. Only the codec: with
 * {@link KafkaConfig#registryUrl} set, {@link KafkaPublisher} frames event
 * payloads with it and {@link KafkaConsumerLoop} reads them back.
 */
public final class ConfluentFraming {
  /** The first byte of every framed value. */
  public static final byte MAGIC = 0;

  private ConfluentFraming() {}

  /**
   * A parsed frame.
   *
   * @param schemaId the registry's schema id
   * @param messageIndexes the path of the message in its file, [0] for the first top-level message
   * @param payload the protobuf bytes
   */
  public record Frame(int schemaId, List<Integer> messageIndexes, byte[] payload) {
    @Override
    public boolean equals(Object o) {
      return o instanceof Frame f && f.schemaId == schemaId && f.messageIndexes.equals(messageIndexes)
          && Arrays.equals(f.payload, payload);
    }

    @Override
    public int hashCode() {
      return 31 * (31 * schemaId + messageIndexes.hashCode()) + Arrays.hashCode(payload);
    }

    @Override
    public String toString() {
      return "Frame[schemaId=" + schemaId + ", messageIndexes=" + messageIndexes + ", payload=" + payload.length
          + " bytes]";
    }
  }

  /** Frames payload for schemaId; messageIndexes empty or [0] are the file's first message. */
  public static byte[] frame(int schemaId, List<Integer> messageIndexes, byte[] payload) {
    ByteArrayOutputStream b = new ByteArrayOutputStream(payload.length + 8);
    b.write(MAGIC);
    b.write(schemaId >>> 24);
    b.write(schemaId >>> 16);
    b.write(schemaId >>> 8);
    b.write(schemaId);
    if (messageIndexes.isEmpty() || messageIndexes.equals(List.of(0))) {
      b.write(0);
    } else {
      varint(b, zigzag(messageIndexes.size()));
      for (int i : messageIndexes) {
        varint(b, zigzag(i));
      }
    }
    b.writeBytes(payload);
    return b.toByteArray();
  }

  /**
   * Parses a framed value.
   *
   * @throws IllegalArgumentException naming what is wrong: not magic 0, too short, a bad index array
   */
  public static Frame parse(byte[] v) {
    if (v.length < 6) {
      throw new IllegalArgumentException("confluent: " + v.length + " bytes are too few for a framed value");
    }
    if (v[0] != MAGIC) {
      throw new IllegalArgumentException("confluent: magic byte " + v[0] + ", want 0");
    }
    int id = (v[1] & 0xff) << 24 | (v[2] & 0xff) << 16 | (v[3] & 0xff) << 8 | (v[4] & 0xff);
    int[] pos = {5};
    int n = unzigzag(readVarint(v, pos));
    if (n < 0 || n > v.length) {
      throw new IllegalArgumentException("confluent: message-index count " + n + " is out of range");
    }
    List<Integer> idx = new ArrayList<>(Math.max(n, 1));
    if (n == 0) {
      idx.add(0);
    }
    for (int i = 0; i < n; i++) {
      int x = unzigzag(readVarint(v, pos));
      if (x < 0) {
        throw new IllegalArgumentException("confluent: message index " + x + " is negative");
      }
      idx.add(x);
    }
    return new Frame(id, List.copyOf(idx), Arrays.copyOfRange(v, pos[0], v.length));
  }

  private static int zigzag(int n) {
    return (n << 1) ^ (n >> 31);
  }

  private static int unzigzag(int n) {
    return (n >>> 1) ^ -(n & 1);
  }

  private static void varint(ByteArrayOutputStream b, int v) {
    while ((v & ~0x7f) != 0) {
      b.write((v & 0x7f) | 0x80);
      v >>>= 7;
    }
    b.write(v);
  }

  private static int readVarint(byte[] v, int[] pos) {
    int result = 0;
    for (int shift = 0; shift < 35; shift += 7) {
      if (pos[0] >= v.length) {
        throw new IllegalArgumentException("confluent: message-index array runs past the value");
      }
      byte x = v[pos[0]++];
      result |= (x & 0x7f) << shift;
      if ((x & 0x80) == 0) {
        return result;
      }
    }
    throw new IllegalArgumentException("confluent: a message-index varint is longer than 5 bytes");
  }
}
