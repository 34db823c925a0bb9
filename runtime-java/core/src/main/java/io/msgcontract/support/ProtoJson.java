package io.msgcontract.support;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.MessageOrBuilder;
import com.google.protobuf.util.JsonFormat;

/**
 * Proto JSON through protobuf-java-util, an optional dependency: only this class refers to it,
 * so services that use binary payloads only need protobuf-java alone.
 */
final class ProtoJson {
  private static final JsonFormat.Printer PRINTER =
      JsonFormat.printer().preservingProtoFieldNames().omittingInsignificantWhitespace();

  private ProtoJson() {}

  static String print(MessageOrBuilder m) throws InvalidProtocolBufferException {
    return PRINTER.print(m);
  }

  static void merge(String json, Message.Builder b) throws InvalidProtocolBufferException {
    JsonFormat.parser().merge(json, b);
  }
}
