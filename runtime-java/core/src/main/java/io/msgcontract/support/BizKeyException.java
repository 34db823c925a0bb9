package io.msgcontract.support;

/**
 * A biz_key that cannot be rendered. Producers must not publish the event:
 * an empty or oversized key would make unrelated messages collide.
 */
public final class BizKeyException extends Exception {
  private static final long serialVersionUID = 1L;

  /** The closed set of key-rendering failures, identical in every language. */
  public enum Code {
    /** A placeholder is an empty string, an unset sub-message on a dotted path or an absent optional field. */
    EMPTY_FIELD,
    /** The rendered key is over {@link BizKeyBuilder#MAX_LEN} bytes after encoding. */
    KEY_TOO_LONG,
  }

  private final Code code;
  private final String field;
  private final int length;

  BizKeyException(Code code, String field, int length, String message) {
    super(code.name() + ": " + message);
    this.code = code;
    this.field = field;
    this.length = length;
  }

  /** The failure's code. */
  public Code code() {
    return code;
  }

  /** The placeholder path for EMPTY_FIELD, or "" otherwise. */
  public String field() {
    return field;
  }

  /** The rendered key's length in bytes for KEY_TOO_LONG, or 0 otherwise. */
  public int length() {
    return length;
  }
}
