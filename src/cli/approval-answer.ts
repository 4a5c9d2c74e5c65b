import os from "node:os";
import type { Command } from "./commander.js";
import type { CliContext } from "./adapter.js";
import { LiError } from "../errors.js";
import { answerApproval, type Approval } from "../lifecycle/approvals/records.js";
import { hostName } from "../lifecycle/locate.js";
import { keyValues } from "./format.js";
import { renderWithStore } from "./views.js";

/*
 * li approve and li deny (issue 39): one answer to a pending request, by compare-and-set, so of
 * two answers given at once exactly one wins and the other is refused naming what it found.
 */

/** Who answers: the person at this terminal, on this host. */
export function answerer(): string {
  let user = process.env.USER || process.env.LOGNAME || "";
  try {
    user ||= os.userInfo().username;
  } catch {}
  return `${user || "unknown"}@${hostName()}`;
}

export function registerAnswer(root: Command, ctx: CliContext, answer: "allow" | "deny"): void {
  const verb = answer === "allow" ? "approve" : "deny";
  const past = answer === "allow" ? "allowed" : "denied";
  root
    .command(verb)
    .description(`${answer} a pending approval request (li approvals lists them): the waiting agent's tool ${answer === "allow" ? "runs" : "is refused"}`)
    .argument("<id>", "the request: its id (apr_…) or an unambiguous prefix")
    .option("--message <text>", `a note recorded with the answer${answer === "deny" ? " and given to the agent as the reason" : ""} (at most 4 KiB)`)
    .option(
      "--for-run",
      answer === "allow"
        ? "also answer that run's later requests whose commands this one's cover, allowed without asking: for a shell tool, each of their simple commands word for word one of this request's, with nothing li cannot see through (a request for another tool: the same input)"
        : "also answer that run's later requests that contain one of this request's commands (word for word), denied without asking (a request for another tool: the same input)",
    )
    .option("--for-run-tool", `also answer every later request of that run for the same tool, whatever it asks: ${past} without asking`)
    .addHelpText(
      "after",
      `
The answer is recorded in the store, so it may be given from any host sharing it; the
waiting run's worker reads it within about a second and answers its agent. It is recorded
as given by you (user@host). A request already answered, expired or cancelled (its run
ended) is refused, naming its state: of two answers given at once, exactly one wins.

${
  answer === "allow"
    ? `--for-run on "npm test" answers a later "npm test", not "npm test && rm -rf ~",
"npm test $(…)" or "curl …": those ask again. --for-run-tool answers them all.`
    : `--for-run on "curl http://x" also denies a later "npm test && curl http://x";
--for-run-tool denies every later request for the tool.`
}

Examples:
  li ${verb} apr_01k3f
  li ${verb} apr_01k3f --message "${answer === "allow" ? "ok, once" : "use the test script"}"
  li ${verb} apr_01k3f --for-run
  li ${verb} apr_01k3f --for-run-tool`,
    )
    .action((id: string, opts: { message?: string; forRun?: boolean; forRunTool?: boolean }) =>
      renderWithStore(
        ctx,
        async (store) => {
          if (opts.forRun && opts.forRunTool) throw new LiError("invalid_input", "give --for-run (later requests with the same commands) or --for-run-tool (every later request for the tool), not both", { field: "for_run" });
          const forRun = opts.forRunTool ? "tool" : opts.forRun ? "commands" : null;
          const r = await answerApproval(store, id, { answer, by: answerer(), message: opts.message ?? null, forRun });
          if (!r.ok) throw refusal(r.approval);
          return { data: { approval: r.approval }, human: (d: { approval: Approval }) => `${d.approval.id}: ${past}${forRunNote(d.approval)}\n${keyValues(summary(d.approval))}` };
        },
        { write: true },
      ),
    );
}

const forRunNote = (a: Approval) =>
  a.for_run_scope === "tool" ? ` (and every later ${a.tool} request of the run)` : a.for_run_scope === "commands" ? " (and the run's later requests for the same commands)" : "";

const summary = (a: Approval) => ({ run: a.run, host: a.host, tool: a.tool, input: a.input.length > 200 ? a.input.slice(0, 200) + "…" : a.input, answered_by: a.answered_by, message: a.message });

/** An answer to a request no longer pending: conflict, naming its state and who or what ended it. */
function refusal(a: Approval): LiError {
  const who = a.answered_by ? ` by ${a.answered_by}` : "";
  return new LiError("conflict", `${a.id} is already ${a.state}${who}${a.answered_at ? ` at ${a.answered_at}` : ""}${a.message ? `: ${a.message}` : ""}; nothing was changed`, {
    code: "not_pending",
    id: a.id,
    state: a.state,
    answered_by: a.answered_by,
    answered_at: a.answered_at,
  });
}
