import fs from "node:fs";
import path from "node:path";
import type { Entity } from "../lifecycle/store.js";

/**
 * The request a run was submitted with, as stored: its spec, and the prompt snapshot in
 * runs/<id>/prompt.txt (null once li clean removed it, or for a step not started yet).
 */
export function storedRequest(e: Entity) {
  const prompt_file = e.run_dir ? path.join(e.run_dir, "prompt.txt") : null;
  let prompt: string | null = null;
  try {
    if (prompt_file) prompt = fs.readFileSync(prompt_file, "utf8");
  } catch {}
  return { spec: e.spec, prompt, prompt_file, prompt_bytes: prompt === null ? null : Buffer.byteLength(prompt) };
}
