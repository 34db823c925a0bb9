package io.msgcontract.support;

/**
 * Writes JSON string literals. The runtimes build their few JSON documents
 * (log lines, dead-letter metadata) by hand rather than pull in a JSON
 * library; this is the one place that escapes their strings.
 */
public final class JsonStrings {
  private JsonStrings() {}

  /**
   * Appends {@code s} to {@code b} as a JSON string: quoted, with quotes,
   * backslashes and control characters escaped.
   *
   * @return {@code b}
   */
  public static StringBuilder quote(StringBuilder b, String s) {
    b.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        default -> {
          if (c < 0x20) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.append('"');
  }
}
