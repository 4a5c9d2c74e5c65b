import { spawn } from "node:child_process";

/** Opens `url` in the user's browser ($BROWSER, else the desktop's opener); says why when it cannot. */
export function openBrowser(url: string): Promise<string | null> {
  const [cmd, ...args] = process.env.BROWSER ? [process.env.BROWSER] : process.platform === "darwin" ? ["open"] : ["xdg-open"];
  return new Promise((resolve) => {
    try {
      const child = spawn(cmd, [...args, url], { stdio: "ignore", detached: true });
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
