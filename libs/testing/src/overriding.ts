/**
 * `target` as it is, except for what `overrides` replaces: a bus that drops
 * one kind of call, or records what it is asked, and forwards the rest. Any
 * method the target gains later is forwarded too, with no list to keep.
 */
export function overriding<T extends object>(target: T, overrides: Partial<T>): T {
  return new Proxy(target, {
    get(inner, key) {
      if (Object.hasOwn(overrides, key)) return overrides[key as keyof T];
      const value: unknown = Reflect.get(inner, key, inner);
      return typeof value === "function" ? value.bind(inner) : value;
    },
  });
}
