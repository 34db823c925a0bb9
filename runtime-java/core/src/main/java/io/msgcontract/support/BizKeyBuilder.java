package io.msgcontract.support;

import java.nio.charset.StandardCharsets;

/**
 * Renders a biz_key by the cross-language rules: literals as written;
 * strings percent-encoded as UTF-8 bytes outside {@code A-Z a-z 0-9 - . _ ~}
 * with upper-case hex; integers in base 10 (64-bit exact, unsigned kinds
 * unsigned); bool {@code true}/{@code false}; enums by value name. The
 * first failure sticks and {@link #key()} reports it.
 */
public final class BizKeyBuilder {
  /** The longest key allowed, in bytes after encoding. */
  public static final int MAX_LEN = 512;

  private static final char[] HEX = "0123456789ABCDEF".toCharArray();

  private final StringBuilder buf = new StringBuilder();
  private String failedField;

  /** Returns an empty builder. */
  public BizKeyBuilder() {}

  /** Appends template text as written: literals are never percent-encoded. */
  public BizKeyBuilder literal(String s) {
    buf.append(s);
    return this;
  }

  /** Appends a string field's value, percent-encoded; an empty value fails with EMPTY_FIELD. */
  public BizKeyBuilder string(String field, String v) {
    if (v.isEmpty()) {
      return fail(field);
    }
    buf.append(escape(v));
    return this;
  }

  /** Appends a signed integer in base 10. */
  public BizKeyBuilder integer(long v) {
    buf.append(v);
    return this;
  }

  /** Appends a uint32 or fixed32, held in a Java int, as an unsigned number. */
  public BizKeyBuilder unsigned32(int v) {
    buf.append(Integer.toUnsignedString(v));
    return this;
  }

  /** Appends a uint64 or fixed64, held in a Java long, as an unsigned number. */
  public BizKeyBuilder unsigned64(long v) {
    buf.append(Long.toUnsignedString(v));
    return this;
  }

  /** Appends true or false. */
  public BizKeyBuilder bool(boolean v) {
    buf.append(v);
    return this;
  }

  /**
   * Appends an enum value by name, or by number when an open enum holds a
   * number the contract does not know.
   */
  public BizKeyBuilder enumValue(com.google.protobuf.Descriptors.EnumDescriptor type, int number) {
    com.google.protobuf.Descriptors.EnumValueDescriptor v = type.findValueByNumber(number);
    if (v == null) {
      buf.append(number);
    } else {
      buf.append(v.getName());
    }
    return this;
  }

  /** Records an EMPTY_FIELD failure for field unless one is recorded already. */
  public BizKeyBuilder fail(String field) {
    if (failedField == null) {
      failedField = field;
    }
    return this;
  }

  /** Returns the rendered key, or throws the first failure. */
  public String key() throws BizKeyException {
    if (failedField != null) {
      throw new BizKeyException(BizKeyException.Code.EMPTY_FIELD, failedField, 0,
          "biz_key field \"" + failedField + "\" is empty or unset; the producer must set it");
    }
    String k = buf.toString();
    int n = k.getBytes(StandardCharsets.UTF_8).length;
    if (n > MAX_LEN) {
      throw new BizKeyException(BizKeyException.Code.KEY_TOO_LONG, "", n,
          "biz_key is " + n + " bytes after encoding, over the " + MAX_LEN + "-byte limit");
    }
    return k;
  }

  /** Percent-encodes s as UTF-8 bytes outside A-Z a-z 0-9 - . _ ~, with upper-case hex. */
  public static String escape(String s) {
    byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
    StringBuilder out = new StringBuilder(bytes.length);
    for (byte b : bytes) {
      int c = b & 0xff;
      if (unreserved(c)) {
        out.append((char) c);
      } else {
        out.append('%').append(HEX[c >> 4]).append(HEX[c & 15]);
      }
    }
    return out.toString();
  }

  private static boolean unreserved(int c) {
    return ('A' <= c && c <= 'Z') || ('a' <= c && c <= 'z') || ('0' <= c && c <= '9')
        || c == '-' || c == '.' || c == '_' || c == '~';
  }
}
