import fs from "node:fs";
import { Command, Option } from "../commander.js";
import { CATEGORIES } from "../../config/policy.js";
import { cachedBundle } from "../../entrypoints.js";
import { render, type CliContext } from "../adapter.js";
import { pageLimitArg } from "../parsers.js";
import { clientConfig, CLIENTS } from "./mcp-config.js";

export function register(root: Command, ctx: CliContext): void {
  const mcp = root
    .command("mcp")
    .description("serve the li MCP surface over stdio: one tool, request(ops, help)")
    .addHelpText(
      "after",
      `
li mcp speaks MCP over stdio: an MCP client starts it, it is not run by hand.
  li mcp config claude-code     prints a ready configuration (also ${CLIENTS.slice(1).join(", ")})
  li mcp info                   what a server started from this install would report`,
    )
    .option("--read-only", "offer only read verbs (job.status, job.wait, ...): no spawn, no kill")
    .addOption(new Option("--allow <categories>", `offer only these categories, comma-separated (${CATEGORIES.join(",")})`))
    .option("--allow-verb <verb>", "offer this verb whatever its category (repeatable)", (v: string, prev: string[] = []) => [...prev, v])
    .option("--deny-verb <verb>", "never offer this verb (repeatable; wins over everything)", (v: string, prev: string[] = []) => [...prev, v])
    .addOption(
      new Option("--sandbox <mode>", "workspace: the floor for every run this server starts (each is contained to its own tree; an op asking sandbox: off is refused, and no profile or settings file lowers it); off: each op, profile or settings default decides (the default)").choices(["workspace", "off"]),
    )
    .addHelpText(
      "after",
      `
Policy: the flags and mcp.policy in settings.yaml ({read_only, allow, allow_verbs, deny_verbs}; a
project file's only after \`li hooks trust\`) merge most restrictive. A refused verb is absent from
the catalog, listed in unavailable with the rule, and its ops answer verb_forbidden. Every op
appends one line to $LI_HOME/mcp-audit.jsonl (li mcp audit reads it).`,
    )
    .action(async (opts: { readOnly?: boolean; allow?: string; allowVerb?: string[]; denyVerb?: string[]; sandbox?: "workspace" | "off" }) => {
      const { serverOptions } = await import("./mcp-serve.js");
      // The li processes the server starts inherit it; a floor already in this environment stays.
      if (opts.sandbox === "workspace") {
        const { SANDBOX_FLOOR_ENV } = await import("../../runtime/sandbox/choice.js");
        process.env[SANDBOX_FLOOR_ENV] = "workspace";
      }
      const options = serverOptions(opts);
      if (process.stdin.isTTY)
        process.stderr.write(`li mcp speaks MCP over stdio and waits for a client on stdin.\nTo use it, configure a client: li mcp config ${CLIENTS.join("|")}\n`);
      // The MCP stack (SDK, ajv, tsyringe) loads only here, never for other commands: the server
      // with the SDK is a bundle of its own, run from its code cache like the CLI.
      const { serveStdio } = await cachedBundle<typeof import("../../mcp/server.js")>("mcp-server");
      await serveStdio(options);
    });

  mcp
    .command("info")
    .description("the li that answers: version, build id, LI_HOME, providers, and the MCP surface's limits")
    .action(() =>
      render(ctx, async () => {
        const { serverInfo } = await import("./mcp-info.js");
        const data = serverInfo();
        return { data, human: (d: typeof data) => JSON.stringify(d, null, 2) };
      }),
    );

  mcp
    .command("classify")
    .description("a permission hook: read a client's PreToolUse (Claude Code, VS Code) or beforeMCPExecution (Cursor) payload on stdin, answer allow, ask or deny")
    .option("--read-only", "classify as a --read-only server would refuse")
    .addOption(new Option("--allow <categories>", "as li mcp --allow"))
    .option("--allow-verb <verb>", "as li mcp --allow-verb (repeatable)", (v: string, prev: string[] = []) => [...prev, v])
    .option("--deny-verb <verb>", "as li mcp --deny-verb (repeatable)", (v: string, prev: string[] = []) => [...prev, v])
    .addHelpText(
      "after",
      `
Each op is judged by its verb's effects and the policy in force (these flags and mcp.policy in
settings): read → allow, spawn or control → ask, unknown, retired or not offered → deny; the most
restrictive op decides. li's tool is known by its input (ops/help), whatever the client calls it.
A payload that is not li's gets no output and exit 0. Wire it as a PreToolUse hook matching
mcp__li__.*; do not also add a blanket allow rule for mcp__li__request, which would let a
spawn through without asking.`,
    )
    .action(async (_opts: unknown, cmd: Command) => {
      // The policy flags are also li mcp's own: commander may have given them to the parent.
      const opts = cmd.optsWithGlobals() as { readOnly?: boolean; allow?: string; allowVerb?: string[]; denyVerb?: string[] };
      const { classifyHook } = await import("./mcp-classify.js");
      const { serverOptions } = await import("./mcp-serve.js");
      let payload: unknown;
      try {
        payload = JSON.parse(fs.readFileSync(0, "utf8"));
      } catch {
        return;
      }
      const answer = classifyHook(payload, serverOptions(opts).policy);
      if (answer) process.stdout.write(answer + "\n");
    });

  mcp
    .command("audit")
    .description("the op audit log: one line per op the MCP server handled (never the args, only their digest)")
    .option("--since <time>", "only ops at or after this ISO 8601 time, or this long ago (30m, 2h, 7d)")
    .option("--verb <verb>", "only this verb")
    .option("--code <code>", "only this result code (ok, invalid_args, verb_forbidden, ...)")
    .option("--limit <n>", "at most N lines, newest last", pageLimitArg, 100)
    .action((opts: { since?: string; verb?: string; code?: string; limit: number }) =>
      render(ctx, async () => {
        const { readAudit } = await import("./mcp-audit.js");
        const data = readAudit(opts);
        return { data, human: (d: typeof data) => d.entries.map((e: any) => `${e.at}  ${e.verb}  ${e.code}  ${e.duration_ms}ms${e.entities.length ? "  " + e.entities.join(",") : ""}`).join("\n") || "(no ops recorded)" };
      }),
    );

  mcp
    .command("config")
    .description("print a ready MCP client configuration for this install (absolute paths, the LI_HOME in force)")
    .argument("<client>", CLIENTS.join(" | "))
    .addHelpText("after", "\nMCP clients do not pass your shell's environment: the printed LI_HOME keeps the server on your store.")
    .action((client: string) =>
      render(ctx, () => {
        const data = clientConfig(client);
        return {
          data,
          human: (d: any) =>
            [
              `# ${d.file}`,
              ...(d.note ? d.note.split("\n").map((l: string) => `# ${l}`) : []),
              d.toml ?? JSON.stringify(d.config, null, 2),
              ...(d.command ? ["", `# or: ${d.command}`] : []),
              ...(d.hook ? ["", `# the permission hook (${d.hook.file}); add no blanket allow rule for mcp__li__request`, JSON.stringify(d.hook.settings, null, 2)] : []),
            ].join("\n"),
        };
      }),
    );
}
