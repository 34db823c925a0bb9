package io.msgcontract.support;

import java.util.List;
import java.util.Map;

/**
 * The states of an entity and, per state, the states it may be reached
 * from. States are compared by number: allow_alias names of one number
 * are one state, named by the first value declared with it.
 *
 * @param fullName the enum's full proto name
 * @param predecessors every state's canonical name mapped to its allowed predecessors
 * @param aliases every allow_alias name mapped to the canonical name of its number
 */
public record StateMachine(
    String fullName, Map<String, List<String>> predecessors, Map<String, String> aliases) {

  /** Copies the maps, so the machine cannot change after construction. */
  public StateMachine {
    predecessors = Map.copyOf(predecessors);
    aliases = Map.copyOf(aliases);
  }

  /** A machine whose enum has no aliases. */
  public StateMachine(String fullName, Map<String, List<String>> predecessors) {
    this(fullName, predecessors, Map.of());
  }

  /**
   * Answers whether an entity in state from may move to state to: unknown
   * names are ILLEGAL; the same state (aliases included) is DUPLICATE; a
   * listed predecessor is ALLOWED; anything else is ILLEGAL.
   */
  public Transit canTransit(String from, String to) {
    from = aliases.getOrDefault(from, from);
    to = aliases.getOrDefault(to, to);
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
