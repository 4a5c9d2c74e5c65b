import { Command } from "../commander.js";
import { invalid } from "../../errors.js";
import {
  BODY_CAP_BYTES,
  BROADCAST,
  checkBody,
  createTeam,
  listTeams,
  MAX_MEMBERS,
  receiveMessages,
  resolveTeam,
  sendMessage,
  showTeam,
  type MessageView,
} from "../../lifecycle/teams.js";
import { render, type CliContext } from "../adapter.js";
import { keyValues, table } from "../format.js";
import { pageLimitArg } from "../parsers.js";
import { renderWithStore, withStore } from "../views.js";
import { readTextFile } from "../../runtime/submit/file-args.js";
import { needsOneOf, textArgument, textFileOption } from "../builders/mcp-hints.js";

const MESSAGE_COLUMNS = ["id", "from", "to", "created_at", "body"];

/** Body words or --body-file (`-` is stdin), never both. */
function readBody(words: string[], file: string | undefined): string {
  if (file !== undefined && words.length) throw invalid("give the body as words or with --body-file, not both", { field: "body_file" });
  if (file === undefined) return checkBody(words.join(" "));
  return checkBody(readTextFile(file, "--body-file", BODY_CAP_BYTES));
}

/** One line per message in the human view; bodies keep their text but not their line breaks. */
const humanMessages = (messages: MessageView[]) => table(messages.map((m) => ({ ...m, body: m.body.replace(/\s*\n\s*/g, " ⏎ ") })), MESSAGE_COLUMNS);

export function register(root: Command, ctx: CliContext): void {
  const team = root
    .command("team")
    .description("teams of named members that leave each other messages")
    .addHelpText(
      "after",
      `
A team is a name and a fixed set of members. Members send messages to one member or to
all (every member but the sender). Each member has a read cursor: li team receive returns
what arrived since, oldest first, and moves it; --peek reads without moving it.

Example session:
  li team create review --member planner coder tester
  li team send review --from planner --to all "split the parser work"
  li team receive review --as coder`,
    );

  team
    .command("create")
    .description("create a team with its members")
    .argument("<name>", "a unique team name (letters, digits, . _ -)")
    .requiredOption("--member <names...>", `member names (also comma-separated); at most ${MAX_MEMBERS}; "${BROADCAST}" is reserved`)
    .addHelpText("after", "\nGive the team name before --member: the member list takes every word after it.\n\nExamples:\n  li team create review --member planner coder tester\n  li team create pair --member alice,bob")
    .action((name: string, opts: { member: string[] }) =>
      renderWithStore(ctx, async (store) => {
        const row = await createTeam(store, name, opts.member);
        return { data: await showTeam(store, row), human: humanShow };
      }, { write: true }),
    );

  team
    .command("list")
    .description("every team with its members and message count")
    .addHelpText("after", "\nExample:\n  li team list --machine")
    .action(() =>
      renderWithStore(ctx, async (store) => {
        const teams = await listTeams(store);
        const data = { teams, count: teams.length };
        return {
          data,
          human: (d: typeof data) => table(d.teams.map((t) => ({ ...t, members: t.members.join(",") })), ["name", "id", "members", "message_count", "last_message_at"]),
        };
      }),
    );

  team
    .command("show")
    .description("a team's members with their sent, received and unread message counts")
    .argument("<team>", "team name, id or unambiguous id prefix (tm_…)")
    .addHelpText("after", "\nExample:\n  li team show review")
    .action((text: string) =>
      renderWithStore(ctx, async (store) => ({ data: await showTeam(store, await resolveTeam(store, text)), human: humanShow })),
    );

  needsOneOf(
    team
    .command("send")
    .description("send a message to one member or to all")
    .argument("<team>", "team name, id or unambiguous id prefix (tm_…)")
    .addArgument(textArgument("body", "the message"))
    .requiredOption("--from <member>", "the sending member")
    .requiredOption("--to <member>", `the receiving member, or "${BROADCAST}" for every member but the sender`)
    .addOption(textFileOption("--body-file", "read the body from a file"))
    .addHelpText(
      "after",
      `
Bodies are text up to ${BODY_CAP_BYTES} bytes (64 KiB); an empty body or one holding a NUL byte is refused.

Examples:
  li team send review --from planner --to coder "take the lexer"
  li team send review --from tester --to all --body-file report.md`,
    )
    .action((text: string, words: string[], opts: { from: string; to: string; bodyFile?: string }) =>
      render(ctx, () => {
        const body = readBody(words, opts.bodyFile);
        return withStore(async (store) => {
          const data = await sendMessage(store, (await resolveTeam(store, text)), opts.from, opts.to, body);
          return { data, human: (d: typeof data) => `${d.message.id} sent to ${d.recipients.join(", ") || "(no other member)"}` };
        }, { write: true });
      }),
    ),
    ["body", "--body-file"],
  );

  team
    .command("receive")
    .description("messages addressed to a member (or to all), oldest first; marks them read unless --peek")
    .argument("<team>", "team name, id or unambiguous id prefix (tm_…)")
    .requiredOption("--as <member>", "the receiving member")
    .option("--since <message-id>", "start after this message instead of the member's read cursor")
    .option("--limit <n>", "at most N messages (remaining says how many more wait)", pageLimitArg, 50)
    .option("--peek", "read without marking anything read")
    .addHelpText(
      "after",
      `
Without --peek the member's cursor moves to the last message returned, so the next receive
returns only newer ones; it never moves back (--since an older message re-reads history).

Examples:
  li team receive review --as coder
  li team receive review --as coder --peek --limit 5`,
    )
    .action((text: string, opts: { as: string; since?: string; limit: number; peek?: boolean }) =>
      renderWithStore(ctx, async (store) => {
        const data = await receiveMessages(store, (await resolveTeam(store, text)), opts.as, { since: opts.since, limit: opts.limit, peek: !!opts.peek });
        return { data, human: (d: typeof data) => `${humanMessages(d.messages)}\n${d.count} message(s) for ${d.member}; ${d.remaining} more waiting${d.peek ? " (peek: nothing marked read)" : ""}` };
      }, { write: true }),
    );
}

function humanShow(d: Awaited<ReturnType<typeof showTeam>>): string {
  return `${keyValues({ ...d.team, message_count: d.message_count })}\n\nmembers:\n${table(d.members, ["name", "sent", "received", "unread", "read_through", "read_at"])}`;
}
