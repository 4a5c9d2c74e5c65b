import { pathToFileURL } from "node:url";
import type { Command } from "../commander.js";
import { entryScript } from "../../entrypoints.js";
import { LiError } from "../../errors.js";
import { importModule } from "../../packages.js";
import { checkHome, liHome } from "../../lifecycle/paths.js";
import { renderError, type CliContext } from "../adapter.js";
import { intIn } from "../parsers.js";

type StudioModule = typeof import("../../studio/server.js");

export function register(root: Command, ctx: CliContext): void {
  root
    .command("studio")
    .description("a local web dashboard: runs, a flow's graph, a run's change and a fan-out's comparison, schedules, teams, budgets, the outbox and the approvals inbox, live")
    .option("--port <n>", "listen on this port (default: any free one)", intIn(0, 65535), 0)
    .option("--open", "open the dashboard in a browser ($BROWSER, else xdg-open)")
    .addHelpText(
      "after",
      `
li studio serves on 127.0.0.1 only and prints a URL carrying a random token and page key,
as Jupyter does: open that URL (the token becomes a cookie, the key stays in the page;
other local users and pages have neither).
It shows this LI_HOME live: runs newest first with filters; each run's timeline, console,
result and request, a flow's or play's steps as a graph, an isolated run's change (its files,
check and patch) and a fan-out's comparison (each worker's change, and which pairs conflict);
schedules; teams and each team's messages; budgets (spent and reserved against each limit);
the outbox; and the inbox: agents' permission requests (--approvals ask) waiting for a person,
with Allow and Deny (a run's page shows its requests and who answered them).

It only reads state.db. Kill, rerun, schedule enable/disable, dispatch retry, Allow (li approve)
and Deny (li deny) run the li CLI as a subprocess, and the page shows li's own result (a partial
reap included).
Ctrl-C stops it. With --machine it prints one li.result with the url once listening.

Examples:
  li studio --open
  li studio --port 8765`,
    )
    .action(async (opts: { port: number; open?: boolean }) => {
      try {
        checkHome();
        // The server is a bundle of its own: its modules (node:http among them) never load for other commands.
        const studio = await importModule<StudioModule>(pathToFileURL(entryScript("studio")).href);
        const s = await studio.startStudio({ port: opts.port });
        if (ctx.machine) process.stdout.write(JSON.stringify({ contract: "li.result", version: 1, ok: true, data: { url: s.url, port: s.port, pid: process.pid } }) + "\n");
        else process.stdout.write(`li studio is serving ${liHome()} at\n  ${s.url}\nOpen that URL (it carries this session's token). Ctrl-C stops it.\n`);
        const problem = opts.open ? await studio.openBrowser(s.url, s.port) : null;
        if (problem) process.stderr.write(`li: ${problem}\n`);
        await new Promise<void>((resolve) => {
          const stop = () => void s.close().then(resolve);
          process.once("SIGINT", stop);
          process.once("SIGTERM", stop);
        });
      } catch (err: any) {
        if (err?.code === "EADDRINUSE") err = new LiError("conflict", `port ${opts.port} is in use; pick another with --port, or leave it out for a free one`, { port: opts.port });
        renderError(ctx, err);
      }
    });
}
