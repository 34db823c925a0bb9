package io.msgcontract.spring.kafka;

import com.google.protobuf.Message;
import io.msgcontract.support.EventSpec;
import io.msgcontract.support.Handler;
import io.msgcontract.v1.Envelope;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.sql.Connection;

/**
 * One {@link ContractListener} method found on a bean: its group (empty for {@code
 * msgcontract.group}), handler name and spec, and the {@link Handler} that calls it.
 *
 * @param group the group the annotation names, or empty
 * @param handlerName the handler name
 * @param spec the event's spec
 * @param bean the bean (its proxy, so {@code @Transactional} applies)
 * @param method the method, invocable on bean
 */
public record ContractListenerEndpoint(String group, String handlerName, EventSpec<?> spec, Object bean, Method method) {

  /** The signatures a listener may have. */
  private enum Shape { MESSAGE, MESSAGE_ENVELOPE, TX_MESSAGE_ENVELOPE }

  /**
   * Returns a handler that calls the method with what its signature asks for; the method's
   * exception is the handler's.
   *
   * @return the handler
   */
  public Handler<Message> handler() {
    Shape shape = shape(method, spec.defaultInstance().getClass());
    Object target = bean;
    Method m = method;
    return (tx, msg, env) -> {
      Object[] args = switch (shape) {
        case MESSAGE -> new Object[] {msg};
        case MESSAGE_ENVELOPE -> new Object[] {msg, env};
        case TX_MESSAGE_ENVELOPE -> new Object[] {tx, msg, env};
      };
      try {
        m.invoke(target, args);
      } catch (InvocationTargetException e) {
        Throwable c = e.getCause();
        if (c instanceof Exception x) {
          throw x;
        }
        throw (Error) c;
      }
    };
  }

  /** The message class of method's signature, or null when the signature fits none. */
  static Class<?> messageParameter(Method method) {
    Class<?>[] p = method.getParameterTypes();
    if (p.length == 1 || p.length == 2) {
      return p[0];
    }
    if (p.length == 3) {
      return p[1];
    }
    return null;
  }

  /** Checks method's signature against messageClass. */
  static void check(Method method, Class<?> messageClass) {
    shape(method, messageClass);
  }

  private static Shape shape(Method method, Class<?> messageClass) {
    Class<?>[] p = method.getParameterTypes();
    if (p.length == 1 && p[0].isAssignableFrom(messageClass)) {
      return Shape.MESSAGE;
    }
    if (p.length == 2 && p[0].isAssignableFrom(messageClass) && p[1] == Envelope.class) {
      return Shape.MESSAGE_ENVELOPE;
    }
    if (p.length == 3 && p[0] == Connection.class && p[1].isAssignableFrom(messageClass) && p[2] == Envelope.class) {
      return Shape.TX_MESSAGE_ENVELOPE;
    }
    throw new IllegalStateException("@ContractListener " + method + ": the signature must be (" + messageClass.getSimpleName()
        + " msg), (" + messageClass.getSimpleName() + " msg, Envelope env) or (Connection tx, "
        + messageClass.getSimpleName() + " msg, Envelope env), with the event's message class "
        + messageClass.getName());
  }
}
