import fs from "node:fs";
import path from "node:path";
import { homePolicy, type HomePolicyInput, type SandboxHomePolicy } from "../../config/sandbox-home.js";
import { packageRoot } from "../../entrypoints.js";

/*
 * The worker's side of the home's allow-list (src/config/sandbox-home.ts): the run's private
 * provider state directory, made before bubblewrap starts. Its session directories are made in the
 * person's state directory first (so a session started inside is kept there, and resumed by the
 * next run), its mixed files (claude's `.claude.json`) copied into the run's scratch; nothing is
 * ever copied back.
 */

export const homeView = (i: HomePolicyInput): SandboxHomePolicy => homePolicy(i);

export interface PrivateState {
  /** What cleanup removes. */
  root: string;
  /** Bound over the state rule's directory. */
  dir: string;
  /** Where each private copy shows → the copy in the scratch. */
  copies: Record<string, string>;
}

export function prepareState(view: SandboxHomePolicy, scratch: string): PrivateState | null {
  const st = view.state;
  if (!st) return null;
  const root = path.join(scratch, "state");
  const dir = path.join(root, "dir");
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  // The person's own state directory and its session folders: what the CLI would make on its first run.
  if (fs.existsSync(path.dirname(st.dir)))
    for (const f of st.state) if (f.endsWith("/")) fs.mkdirSync(path.join(st.dir, f), { recursive: true, mode: 0o700 });
  const copies: Record<string, string> = {};
  for (const from of st.copies) {
    let text: Buffer;
    try {
      if (!fs.statSync(from).isFile()) continue;
      text = fs.readFileSync(from);
    } catch {
      continue;
    }
    // A copy inside the state directory lands in the private one as it is; one outside it (the home's) is bound.
    const inside = path.relative(st.dir, from);
    const to = !inside.startsWith("..") && !path.isAbsolute(inside) ? path.join(dir, inside) : path.join(root, path.basename(from));
    fs.writeFileSync(to, text, { mode: 0o600 });
    if (to.startsWith(root + "/") && !to.startsWith(dir + "/")) copies[from] = to;
  }
  return { root, dir, copies };
}

/** li's own scripts (the mock providers) and the node that runs them: readable wherever li is installed. */
export function ownPrograms(): string[] {
  return [path.join(packageRoot(), "dist", "bundle"), process.execPath];
}
