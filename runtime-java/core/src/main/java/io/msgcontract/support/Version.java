package io.msgcontract.support;

/**
 * The version of this runtime. Every generated contract class calls {@link #require} in its
 * static initializer, so a contract class generated for a newer runtime fails on first use with
 * an error naming both versions, instead of misbehaving later.
 */
public final class Version {
  /** The release of io.msgcontract:msgcontract-runtime this class belongs to. */
  public static final String RUNTIME = "0.1.0";

  /**
   * The API level this runtime provides. It grows by one whenever generated code starts to use
   * something earlier runtimes lack; generated code names the level it needs.
   */
  public static final int API = 1;

  /** Present from API level 1 on; contract classes may reference it in constant expressions. */
  public static final int IS_AT_LEAST_1 = 1;

  private Version() {}

  /**
   * Checks that this runtime provides API level {@code api}, which {@code generated} needs.
   *
   * @param api the API level the generated class was emitted for
   * @param generated the generated class, named in the error
   * @throws IllegalStateException when this runtime is older than the generated code
   */
  public static void require(int api, Class<?> generated) {
    if (api > API) {
      throw new IllegalStateException(
          generated.getName()
              + " was generated for msgcontract-runtime API level "
              + api
              + ", but io.msgcontract:msgcontract-runtime "
              + RUNTIME
              + " on the classpath provides level "
              + API
              + "; upgrade the dependency to the msgcontract release that generated the code");
    }
  }
}
