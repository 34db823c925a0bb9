package io.msgcontract.support;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.DiscardUnknownFieldsParser;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.Parser;
import java.io.IOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * The payload identity stored with a dedup claim (DESIGN.md "Payload hash"):
 * lower-case hex SHA-256 of the deterministic binary encoding of the decoded
 * payload message with its unknown fields dropped. The same message sent as
 * binary or as proto JSON, or encoded by another language, hashes the same;
 * a changed field does not. Go's dedup.HashMessage and Python's
 * msgcontract_runtime.payload_hash.of compute the same value.
 */
public final class PayloadHash {
  private PayloadHash() {}

  /** Returns the hash of m. */
  public static String of(Message m) {
    Message known = withoutUnknown(m, m.getParserForType());
    try {
      byte[] canon = new byte[known.getSerializedSize()];
      CodedOutputStream out = CodedOutputStream.newInstance(canon);
      out.useDeterministicSerialization();
      known.writeTo(out);
      out.checkNoSpaceLeft();
      return hex(sha256(canon));
    } catch (IOException e) {
      throw new IllegalStateException("serializing into an array of the exact size cannot fail", e);
    }
  }

  private static <T extends Message> Message withoutUnknown(Message m, Parser<T> parser) {
    try {
      return DiscardUnknownFieldsParser.wrap(parser).parsePartialFrom(m.toByteString());
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalStateException("a message's own encoding does not parse: " + e.getMessage(), e);
    }
  }

  private static byte[] sha256(byte[] b) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(b);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform provides SHA-256", e);
    }
  }

  private static String hex(byte[] h) {
    StringBuilder s = new StringBuilder(2 * h.length);
    for (byte b : h) {
      s.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
    }
    return s.toString();
  }
}
