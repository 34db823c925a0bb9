package io.msgcontract.support;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;

/**
 * One event's contract as data: where it goes, how its key is rendered, how
 * it is retried and classified. Generated contract classes declare one per
 * event; the consumer skeleton and the envelope codec read nothing else.
 *
 * @param <M> the event message
 * @param fullName the message's full proto name
 * @param topic the broker destination
 * @param eventType the event type written into the envelope
 * @param bizKeyTemplate the biz_key template as written in the contract
 * @param retry the effective retry policy (the event's own, else the file's default)
 * @param rules the file's error ranges and unclassified setting
 * @param targetState the state this event moves its entity to, "Enum.VALUE", or ""
 * @param defaultInstance the message's default instance, used to parse payloads
 * @param keyFunction renders the biz_key
 */
public record EventSpec<M extends Message>(
    String fullName,
    String topic,
    String eventType,
    String bizKeyTemplate,
    RetryPolicy retry,
    ErrorRules rules,
    String targetState,
    M defaultInstance,
    BizKeyFunction<M> keyFunction) {

  /** Renders the biz_key of message. */
  public String bizKey(M message) throws BizKeyException {
    return keyFunction.bizKey(message);
  }

  /**
   * Parses a payload in proto JSON (either field-name form) into the event message. Needs
   * com.google.protobuf:protobuf-java-util on the classpath.
   */
  public M parseJson(String json) throws DecodeException {
    Message.Builder b = defaultInstance.newBuilderForType();
    try {
      ProtoJson.merge(json, b);
    } catch (InvalidProtocolBufferException e) {
      throw new DecodeException("payload is not valid proto JSON for " + fullName, e);
    }
    return cast(b.build());
  }

  /** Parses a binary payload into the event message. */
  public M parseBinary(byte[] payload) throws DecodeException {
    try {
      return cast(defaultInstance.getParserForType().parseFrom(payload));
    } catch (InvalidProtocolBufferException e) {
      throw new DecodeException("payload does not decode as " + fullName, e);
    }
  }

  private M cast(Message m) throws DecodeException {
    // The builder and parser of defaultInstance always yield its own class.
    if (!defaultInstance.getClass().isInstance(m)) {
      throw new DecodeException("payload decoded as " + m.getClass().getName() + ", not " + fullName);
    }
    @SuppressWarnings("unchecked")
    M typed = (M) m;
    return typed;
  }
}
