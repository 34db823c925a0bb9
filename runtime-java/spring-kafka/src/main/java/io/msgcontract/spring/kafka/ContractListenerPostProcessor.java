package io.msgcontract.spring.kafka;

import com.google.protobuf.Message;
import io.msgcontract.support.EventSpec;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;

/**
 * Collects the {@link ContractListener} methods of every bean as {@link ContractListenerEndpoint}s,
 * resolving each one's spec and checking its signature as the bean is initialized, so a listener
 * that cannot run fails the start-up and names its method.
 */
public class ContractListenerPostProcessor implements BeanPostProcessor {
  private final List<ContractListenerEndpoint> endpoints = Collections.synchronizedList(new ArrayList<>());

  /** Returns a post-processor with no endpoint found yet. */
  public ContractListenerPostProcessor() {}

  @Override
  public Object postProcessAfterInitialization(Object bean, String beanName) {
    Class<?> type = AopUtils.getTargetClass(bean);
    Map<Method, ContractListener> found = MethodIntrospector.selectMethods(type,
        (MethodIntrospector.MetadataLookup<ContractListener>) m ->
            AnnotatedElementUtils.findMergedAnnotation(m, ContractListener.class));
    for (Map.Entry<Method, ContractListener> e : found.entrySet()) {
      endpoints.add(endpoint(bean, beanName, e.getKey(), e.getValue()));
    }
    return bean;
  }

  private static ContractListenerEndpoint endpoint(Object bean, String beanName, Method method, ContractListener a) {
    String where = "@ContractListener " + beanName + "." + method.getName();
    if (a.handler().isBlank()) {
      throw new IllegalStateException(where + ": handler is required (the dedup key's second half; equal to the "
          + "Go or Python handler's name when they share the database)");
    }
    Class<?> msg = ContractListenerEndpoint.messageParameter(method);
    EventSpec<?> spec;
    try {
      if (a.spec() != void.class) {
        spec = ContractSpecs.fromHolder(a.spec());
      } else if (msg != null && Message.class.isAssignableFrom(msg) && msg != Message.class) {
        spec = ContractSpecs.fromMessage(msg.asSubclass(Message.class));
      } else {
        throw new IllegalArgumentException("the message parameter is not a generated message class: set spec = "
            + "the generated event class, for example PaymentContract.PaySuccess.class");
      }
      ContractListenerEndpoint.check(method, spec.defaultInstance().getClass());
    } catch (IllegalArgumentException | IllegalStateException x) {
      throw new IllegalStateException(where + ": " + x.getMessage(), x);
    }
    Method invocable = AopUtils.selectInvocableMethod(method, bean.getClass());
    invocable.setAccessible(true);
    return new ContractListenerEndpoint(a.group(), a.handler(), spec, bean, invocable);
  }

  /**
   * Returns the endpoints found so far.
   *
   * @return a copy
   */
  public List<ContractListenerEndpoint> endpoints() {
    synchronized (endpoints) {
      return List.copyOf(endpoints);
    }
  }
}
