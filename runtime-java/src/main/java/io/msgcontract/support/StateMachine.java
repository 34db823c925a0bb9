package io.msgcontract.support;

import java.util.List;
import java.util.Map;

/**
 * The states of an entity and, per state, the states it may be reached
 * from.
 *
 * @param fullName the enum's full proto name
 * @param predecessors every state's name mapped to its allowed predecessors
 */
public record StateMachine(String fullName, Map<String, List<String>> predecessors) {

  /** Copies predecessors, so the machine cannot change after construction. */
  public StateMachine {
    predecessors = Map.copyOf(predecessors);
  }

  /**
   * Answers whether an entity in state from may move to state to: unknown
   * names are ILLEGAL; from equal to to is DUPLICATE; a listed predecessor
   * is ALLOWED; anything else is ILLEGAL.
   */
  public Transit canTransit(String from, String to) {
    List<String> target = predecessors.get(to);
    if (target == null || !predecessors.containsKey(from)) {
      return Transit.ILLEGAL;
    }
    if (from.equals(to)) {
      return Transit.DUPLICATE;
    }
    return target.contains(from) ? Transit.ALLOWED : Transit.ILLEGAL;
  }
}
