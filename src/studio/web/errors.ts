// The banner's messages: every view reports its current error under its own key.
import { useEffect, useState } from "preact/hooks";

const errors = new Map<string, string>();
const listeners = new Set<() => void>();

export function reportError(key: string, message: string | null): void {
  if (message === null) {
    if (!errors.delete(key)) return;
  } else {
    if (errors.get(key) === message) return;
    errors.set(key, message);
  }
  for (const l of listeners) l();
}

export function useErrors(): string[] {
  const [list, setList] = useState<string[]>([...new Set(errors.values())]);
  useEffect(() => {
    const l = () => setList([...new Set(errors.values())]);
    listeners.add(l);
    l();
    return () => { listeners.delete(l); };
  }, []);
  return list;
}
