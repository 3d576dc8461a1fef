/**
 * A pure function of a string with its answers remembered: the same few inputs recur (client
 * addresses, User-Agents, emoji), and each answer costs regular expressions or ICU. Bounded,
 * since the inputs come from strangers: once `max` are remembered it starts again (cheaper than
 * an LRU; a flood of new inputs costs no more than the function itself).
 */
export function remembered<T>(answer: (input: string) => T, max: number): (input: string) => T {
  const answers = new Map<string, T>();
  return (input) => {
    let known = answers.get(input);
    if (known === undefined) {
      known = answer(input);
      if (answers.size >= max) answers.clear();
      answers.set(input, known);
    }
    return known;
  };
}
