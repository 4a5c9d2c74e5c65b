import fs from "node:fs";
import path from "node:path";
import { isObject } from "../json.js";
import { holdsPassword } from "../lifecycle/locate.js";
import { liHome } from "../lifecycle/paths.js";
import { yaml } from "../packages.js";
import type { Check } from "./doctor-checks.js";

/*
 * li doctor's check of the one secret li reads from a file: a store URL with its password in
 * $LI_HOME/settings.yaml (docs/hosts.md, Several hosts, 2). That file must be its user's alone; a
 * settings file with no such password is no business of this check, which then says nothing.
 */

/** Whether `store:` in the user settings file holds a password (in the URL, or as a password parameter). */
function storePassword(text: string): boolean {
  if (!/^store(_listen)?\s*:/m.test(text)) return false;
  let doc: unknown;
  try {
    doc = yaml().parse(text);
  } catch {
    return false; // the settings check reports a file that does not parse
  }
  // The listen connection beside a pooled store (store_listen:) carries a password as the store's does.
  const urls = isObject(doc) ? [doc.store, doc.store_listen] : [];
  return urls.some((url) => typeof url === "string" && holdsPassword(url));
}

/** Null when settings.yaml names no store password; else whether only its owner can read the file. */
export function settingsSecretCheck(): Check | null {
  let file: string;
  let mode: number;
  let text: string;
  try {
    file = path.join(liHome(), "settings.yaml");
    mode = fs.statSync(file).mode & 0o777;
    text = fs.readFileSync(file, "utf8");
  } catch {
    return null;
  }
  if (!storePassword(text)) return null;
  const octal = mode.toString(8).padStart(3, "0");
  if (mode & 0o077)
    return {
      check: "settings_secret",
      ok: false,
      detail: `${file} holds the store's password (store:) and is ${mode & 0o004 ? "readable by every user" : mode & 0o040 ? "readable by its group" : "open to others"} (mode ${octal})`,
      fix: `chmod 600 ${file} (or keep the password in PGPASSWORD in the environment of li's own processes)`,
    };
  return { check: "settings_secret", ok: true, detail: `${file} holds the store's password and only its owner can read it (mode ${octal})`, fix: null };
}
