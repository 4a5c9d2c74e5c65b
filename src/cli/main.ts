import { CommanderError, type Command } from "./commander.js";
import { LiError } from "../errors.js";
import { EXIT, renderError, type CliContext } from "./adapter.js";
import { buildProgram } from "./program.js";
import { READS_ONLY_ENV, takeServerIdentity } from "./server-seam.js";
import { findCommand } from "./registry.js";
import { guardStdioStreams, writeErr, writeOut } from "./stdio.js";
import { lendCapturer } from "../runtime/worktree/lend.js";
import { lendHolder } from "../runtime/sandbox/lend-held.js";
import { narrowUmask } from "../runtime/submit/person-umask.js";

/** `--machine` anywhere before `--` selects the machine renderer, even for parse errors. */
function wantsMachine(argv: string[]): boolean {
  const end = argv.indexOf("--");
  return (end < 0 ? argv : argv.slice(0, end)).includes("--machine");
}

/** The command to build: the first word, or the word after commander's implicit `help`. */
function selectedCommand(argv: string[]): string | undefined {
  const words = argv.filter((a) => !a.startsWith("-"));
  return words[0] === "help" ? words[1] : words[0];
}

export async function main(argv: string[]): Promise<void> {
  narrowUmask();
  takeServerIdentity();
  guardStdioStreams();
  // A command that kills or reaps an isolated run captures its change (lifecycle/changes/owed.ts),
  // except under a read-only MCP server, whose reads leave it (and its check) where it waits.
  // Taken out of the environment, so that nothing this li starts (a promoted worker) inherits it.
  const readsOnly = process.env[READS_ONLY_ENV] === "1";
  delete process.env[READS_ONLY_ENV];
  if (!readsOnly) {
    lendCapturer();
    // And holds a checkout run's created files that run code before reaping it (lifecycle/sandbox-held.ts).
    lendHolder();
  }
  const machine = wantsMachine(argv);
  // A getter: the stream is made only by a command that streams.
  const ctx: CliContext = {
    machine,
    get live() {
      return machine ? process.stderr : process.stdout;
    },
  };
  const name = selectedCommand(argv);
  let program;
  try {
    program = await buildProgram(ctx, { only: name && findCommand(name) ? name : undefined });
  } catch (err) {
    renderError(ctx, err);
    return;
  }
  program.exitOverride();
  // In machine mode help is the data of the one JSON object, not text on stdout.
  let helpText = "";
  program.configureOutput({
    writeOut: (s) => {
      if (machine) helpText += s;
      else writeOut(s);
    },
    // In machine mode the parse error becomes the one JSON object instead.
    writeErr: (s) => {
      if (!machine) writeErr(s);
    },
    outputError: (s, write) => write(s),
  });
  applyRecursively(program);
  try {
    await program.parseAsync(argv, { from: "user" });
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.exitCode === 0 || err.code === "commander.helpDisplayed" || err.code === "commander.version") {
        if (machine) {
          const data = err.code === "commander.version" ? { version: helpText.trim() } : { command: helpPath(argv), help: helpText };
          writeOut(JSON.stringify({ contract: "li.result", version: 1, ok: true, data }) + "\n");
        }
        process.exitCode = 0;
        return;
      }
      if (err.code === "commander.help") {
        // A group named without its subcommand (`li`, `li job`): usage went to stderr, and in
        // machine mode stdout must still carry the one error object.
        if (machine) renderError(ctx, new LiError("invalid_input", "a subcommand is required (run with --help for usage)", { code: err.code }));
        process.exitCode = EXIT.invalid;
        return;
      }
      if (machine) renderError(ctx, new LiError("invalid_input", err.message.replace(/^error: /, ""), { code: err.code }));
      process.exitCode = EXIT.invalid;
      return;
    }
    renderError(ctx, err);
  }
}

/** The command words of a help request: `li --machine job list --help` → "job list". */
function helpPath(argv: string[]): string {
  const end = argv.indexOf("--");
  return ["li", ...(end < 0 ? argv : argv.slice(0, end)).filter((a) => !a.startsWith("-") && a !== "help")].join(" ");
}

/** exitOverride and output settings are copied at creation; commands made earlier need them too. */
function applyRecursively(cmd: Command): void {
  for (const sub of cmd.commands) {
    sub.exitOverride();
    sub.configureOutput(cmd.configureOutput());
    applyRecursively(sub);
  }
}
