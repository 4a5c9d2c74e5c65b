/** `li job apply ID`: an isolated run's change applied to the checkout here (issue 29). */
import { forMcp } from "../builders/mcp-hints.js";
import { Option, type Command } from "../commander.js";
import type { CliContext } from "../adapter.js";
import { renderWithStore } from "../views.js";

interface ApplyFlags {
  check?: boolean;
  "3way"?: boolean;
  commit?: boolean;
  again?: boolean;
  cwd?: string;
  acceptCodeFiles?: boolean;
}

export function registerApply(job: Command, ctx: CliContext): void {
  job
    .command("apply")
    .description("apply a run's change (--isolate worktree) to the git checkout here, once; --check is a dry run")
    .argument("<id>", "entity id or unambiguous prefix; @last is the newest run")
    .option("--check", "a dry run: say whether it would apply (or which files would conflict), and change nothing")
    .option("--3way", "when it does not apply cleanly, merge and leave conflict markers in the files that conflict")
    .option("--commit", "make one commit of the change on the checked-out branch, naming the run and its prompt's first line")
    .option("--again", "apply it even though it was applied to this repository before")
    .option("--accept-code-files", "apply it although it touches files that run code when a person or a tool opens the tree (.envrc, .vscode/, .claude/, .gitattributes, ...: li job diff marks them); a person's flag, never an MCP client's")
    .addOption(
      forMcp(
        new Option("--cwd <dir>", "the checkout to change (default: the one holding the current directory)"),
        "the git checkout to change, under the client's roots (default: the server's working directory)",
      ),
    )
    .addHelpText(
      "after",
      `
The change is the one li job diff shows: base..head of the run's branch li/<id>. The target
is the git work tree holding the current directory (or --cwd); it must have the run's base
commit (fetch it, or push the run's branch from its host, first). The change is applied
only when it applies cleanly: otherwise li refuses (conflict), lists the files, and changes
nothing. --3way merges instead and leaves conflict markers in those files (the result names
them). Without --commit the change is left in the working tree (with --3way, the index too);
--commit makes one commit of exactly the change (the files it touches must be unmodified).
Nothing in the working tree or index is lost on any path; a refusal changes nothing.

A change that touches files that run code when a person or a tool opens the tree (an editor's
tasks, .envrc, .gitattributes, .npmrc, an agent CLI's hooks: docs/sandbox.md lists them) is
refused (conflict, reason code_files), naming each, unless --accept-code-files: review them
with li job diff first. Over MCP (job.apply) it is always refused.

Each apply is recorded (which host, repository and HEAD), and a second apply of the same run
to the same repository is refused (conflict, reason already_applied) unless --again. An apply
killed half way is settled by the next one, from what the checkout holds.

Examples:
  li job apply --check inv_01j9x7k2m9
  li job apply --commit inv_01j9x7k2m9
  li job apply --3way --cwd ~/src/project inv_01j9x7k2m9
  li --machine job apply --check inv_01j9x7k2m9 | jq .data.conflicts`,
    )
    .action((id: string, flags: ApplyFlags) =>
      renderWithStore(
        ctx,
        async (store) => {
          const [{ resolve }, { applyRun }, { applyLines }] = await Promise.all([import("../../lifecycle/resolver.js"), import("../../runtime/changes/apply-run.js"), import("../apply-view.js")]);
          const r = await applyRun(store, await resolve(store, id), { check: flags.check, threeWay: flags["3way"], commit: flags.commit, again: flags.again, cwd: flags.cwd, acceptCodeFiles: flags.acceptCodeFiles });
          return {
            data: r,
            human: applyLines,
            // A person's dry run that would conflict, and a merge that left markers, exit 1.
            exitCode: r.check ? (r.would_apply ? 0 : 1) : r.conflicts.length ? 1 : 0,
          };
        },
        { write: !flags.check },
      ),
    );
}
