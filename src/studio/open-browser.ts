import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { childEnv } from "../lifecycle/child-env.js";
import { ensurePrivateDir, liHome, writePrivateFile } from "../lifecycle/paths.js";

/**
 * Opens the studio in the user's browser ($BROWSER, else the desktop's opener); says why when it
 * cannot. The browser is handed a private (0600) page in LI_HOME that redirects to the URL, not
 * the URL itself: a command line is readable by every local user, and the URL carries the token
 * (Jupyter does the same). The page is removed when the studio stops.
 */
export function openBrowser(url: string, port: number): Promise<string | null> {
  const file = path.join(liHome(), `studio-open-${port}.html`);
  const escaped = url.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
  try {
    ensurePrivateDir(liHome());
    writePrivateFile(file, `<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=${escaped}"><title>li studio</title><p><a href="${escaped}">Open li studio</a></p>\n`);
  } catch (err) {
    return Promise.resolve(`could not write the page that opens the studio (${(err as Error).message}); open the URL yourself`);
  }
  process.once("exit", () => fs.rmSync(file, { force: true }));
  const target = pathToFileURL(file).href;
  const [cmd, ...args] = process.env.BROWSER ? [process.env.BROWSER] : process.platform === "darwin" ? ["open"] : ["xdg-open"];
  return new Promise((resolve) => {
    try {
      // A browser is not li: it gets no store URL or credentials (D9; see child-env.ts).
      const child = spawn(cmd, [...args, target], { stdio: "ignore", detached: true, env: childEnv() });
      child.once("error", (err) => resolve(`could not open a browser (${cmd}: ${err.message}); open the URL yourself`));
      child.once("spawn", () => {
        child.unref();
        resolve(null);
      });
    } catch (err) {
      resolve(`could not open a browser (${(err as Error).message}); open the URL yourself`);
    }
  });
}
