import { li, tempHome } from "./helpers/li.js";

/*
 * Issue 18, item 1: a person (or a tool) finds every command by walking `li <cmd> --help`.
 * Each name listed under "Commands:" must be a real subcommand: its own --help succeeds and
 * its usage line names it. Walked through the built li, as a person would.
 */

const h = tempHome();
afterAll(() => h.cleanup());

/** The subcommand names a help text lists under "Commands:" (commander's own `help` aside). */
function listedSubcommands(help: string): string[] {
  const names: string[] = [];
  let inBlock = false;
  for (const line of help.split("\n")) {
    if (/^Commands:\s*$/.test(line)) inBlock = true;
    else if (inBlock && !/^\s/.test(line)) inBlock = false;
    else if (inBlock) {
      const m = /^ {2}(\S+)/.exec(line);
      if (m && m[1] !== "help") names.push(m[1]);
    }
  }
  return names;
}

async function help(words: string[]): Promise<string> {
  const r = await li([...words, "--help"], { env: h.env });
  if (r.code !== 0) throw new Error(`li ${words.join(" ")} --help exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}

test("the parser of a Commands: block reads names, and stops at the block's end", () => {
  const text = "Usage: li x\n\nCommands:\n  run [options] <p>   run it\n                      more words\n  list                all\n  help [command]      display help\n\nSee also:\n  li x NAME   not a command\n";
  expect(listedSubcommands(text)).toEqual(["run", "list"]);
});

test("every subcommand that any li --help lists exists: its own --help names it", async () => {
  const seen: string[] = [];
  const wrong: string[] = [];
  const queue: string[][] = [[]];
  while (queue.length) {
    const words = queue.shift()!;
    const text = await help(words);
    const usage = /^Usage: (.*)$/m.exec(text)?.[1] ?? "";
    if (!usage.startsWith(["li", ...words].join(" "))) wrong.push(`li ${words.join(" ")} --help shows "Usage: ${usage}"`);
    for (const sub of listedSubcommands(text)) {
      seen.push([...words, sub].join(" "));
      queue.push([...words, sub]);
    }
  }
  expect(wrong).toEqual([]);
  // The walk reaches every group's commands, so a group whose help hides them fails here.
  expect(seen).toEqual(expect.arrayContaining(["agent", "job status", "play run", "play list", "play show", "schedule list", "team send", "state migrate", "mcp config"]));
}, 180000);

test("li play --help lists run, list and show; li play NAME --help leads with the playbook's description", async () => {
  expect(listedSubcommands(await help(["play"])).sort()).toEqual(["list", "run", "show"]);
  const fs = await import("node:fs");
  fs.mkdirSync(`${h.home}/playbooks`, { recursive: true });
  fs.writeFileSync(`${h.home}/playbooks/review.playbook.yaml`, 'description: review a change\nprompt: "review {input}"\nmodel: mock/echo\nargs:\n  focus: {type: str, default: bugs}\n');
  const named = await help(["play", "review"]);
  expect(named.split("\n").slice(0, 2)).toEqual([expect.stringMatching(/^playbook review \(/), "  review a change"]);
  expect(named).toMatch(/--focus <value> +focus \[playbook review arg/);
  expect(listedSubcommands(named)).toEqual([]);
  // The machine view of the group's help is the same text, as one li.result.
  const machine = await li(["--machine", "play", "--help"], { env: h.env });
  expect(machine.json).toMatchObject({ ok: true, data: { command: "li play" } });
  expect(listedSubcommands(machine.json.data.help).sort()).toEqual(["list", "run", "show"]);
});
