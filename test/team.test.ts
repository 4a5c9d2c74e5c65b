import fs from "node:fs";
import path from "node:path";
import { li, liData, tempHome } from "./helpers/li.js";

let h: ReturnType<typeof tempHome>;
beforeAll(() => {
  h = tempHome();
});
afterAll(() => h.cleanup());

const run = (args: string[], input?: string) => li(["--machine", ...args], { env: h.env, input });
const data = (args: string[], input?: string) => liData(args, { env: h.env, input });
const send = (team: string, from: string, to: string, ...body: string[]) => data(["team", "send", team, "--from", from, "--to", to, "--", ...body]);
const receive = (team: string, as: string, ...flags: string[]) => data(["team", "receive", team, "--as", as, ...flags]);
const bodies = (r: any) => r.messages.map((m: any) => m.body);

describe("teams", () => {
  test("create, list, show; names and members are checked", async () => {
    const made = await data(["team", "create", "crew", "--member", "alice", "bob,carol", "alice"]);
    expect(made.team.id).toMatch(/^tm_/);
    expect(made.members.map((m: any) => m.name)).toEqual(["alice", "bob", "carol"]);
    expect(made.message_count).toBe(0);

    const list = await data(["team", "list"]);
    expect(list.teams.find((t: any) => t.name === "crew")).toMatchObject({ members: ["alice", "bob", "carol"], member_count: 3, message_count: 0 });
    expect((await data(["team", "show", made.team.id.slice(0, 10)])).team.name).toBe("crew");

    const refusals: [string[], string][] = [
      [["team", "create", "crew", "--member", "x"], "conflict"],
      [["team", "create", "other", "--member", "all"], "invalid_input"],
      [["team", "create", "other", "--member", "no spaces"], "invalid_input"],
      [["team", "create", "tm_fake", "--member", "x"], "invalid_input"],
      [["team", "create", "other"], "invalid_input"],
      [["team", "show", "nope"], "not_found"],
    ];
    for (const [args, kind] of refusals) expect([args.join(" "), (await run(args)).json?.error?.kind]).toEqual([args.join(" "), kind]);
    expect((await data(["team", "list"])).teams.map((t: any) => t.name)).toEqual(["crew"]);
  });

  test("send and receive: direct and broadcast, read cursors, peek, since, limit", async () => {
    await data(["team", "create", "ops", "--member", "ann", "ben", "cat"]);
    const m1 = await send("ops", "ann", "all", "hello", "everyone");
    expect(m1).toMatchObject({ message: { from: "ann", to: "all", body: "hello everyone" }, recipients: ["ben", "cat"] });
    expect(m1.message.id).toMatch(/^msg_/);
    await send("ops", "ben", "ann", "just for ann");
    await send("ops", "cat", "ben", "first for ben");
    await send("ops", "cat", "ben", "second for ben");

    // The sender's own broadcast is not echoed back; direct messages reach only their member.
    expect(bodies(await receive("ops", "ann", "--peek"))).toEqual(["just for ann"]);
    const peek = await receive("ops", "ben", "--peek");
    expect([bodies(peek), peek.peek, peek.read_through]).toEqual([["hello everyone", "first for ben", "second for ben"], true, null]);

    // A limited receive marks only what it returned and says what is left.
    const part = await receive("ops", "ben", "--limit", "2");
    expect([bodies(part), part.remaining]).toEqual([["hello everyone", "first for ben"], 1]);
    expect(part.read_through).toBe(part.messages[1].id);
    const rest = await receive("ops", "ben");
    expect([bodies(rest), rest.remaining]).toEqual([["second for ben"], 0]);
    expect(bodies(await receive("ops", "ben"))).toEqual([]);

    // A newer message is all the next receive returns.
    await send("ops", "ann", "all", "later news");
    expect(bodies(await receive("ops", "ben"))).toEqual(["later news"]);

    // --since re-reads history without moving the cursor back.
    const again = await receive("ops", "ben", "--since", m1.message.id);
    expect(bodies(again)).toEqual(["first for ben", "second for ben", "later news"]);
    expect(bodies(await receive("ops", "ben"))).toEqual([]);

    // cat has read nothing yet: two broadcasts.
    expect(bodies(await receive("ops", "cat"))).toEqual(["hello everyone", "later news"]);

    const show = await data(["team", "show", "ops"]);
    expect(show.message_count).toBe(5);
    expect(show.members).toEqual([
      expect.objectContaining({ name: "ann", sent: 2, received: 1, unread: 1, read_through: null }),
      expect.objectContaining({ name: "ben", sent: 1, received: 4, unread: 0 }),
      expect.objectContaining({ name: "cat", sent: 2, received: 2, unread: 0 }),
    ]);
  });

  test("non-members, empty, NUL and oversized bodies are refused and nothing is stored", async () => {
    await data(["team", "create", "tight", "--member", "x", "y"]);
    const nul = path.join(h.home, "nul.txt");
    fs.writeFileSync(nul, "a\0b");
    const big = path.join(h.home, "big.txt");
    fs.writeFileSync(big, "z".repeat(64 * 1024 + 1));
    const cases: [string[], string, string][] = [
      [["team", "send", "tight", "--from", "ghost", "--to", "x", "hi"], "invalid_input", "--from ghost: not a member"],
      [["team", "send", "tight", "--from", "x", "--to", "ghost", "hi"], "invalid_input", "--to ghost: not a member"],
      [["team", "send", "tight", "--from", "x", "--to", "y", "  "], "invalid_input", "empty"],
      [["team", "send", "tight", "--from", "x", "--to", "y", "--body-file", nul], "invalid_input", "NUL"],
      [["team", "send", "tight", "--from", "x", "--to", "y", "--body-file", big], "invalid_input", "cap"],
      [["team", "send", "tight", "--from", "x", "--to", "y", "--body-file", nul, "words"], "invalid_input", "not both"],
      [["team", "send", "tight", "--from", "x", "hi"], "invalid_input", "--to"],
      [["team", "receive", "tight", "--as", "ghost"], "invalid_input", "--as ghost: not a member"],
      [["team", "receive", "tight", "--as", "x", "--since", "msg_zzzz"], "not_found", "--since"],
    ];
    for (const [args, kind, text] of cases) {
      const r = await run(args);
      expect([args.join(" "), r.json?.error?.kind]).toEqual([args.join(" "), kind]);
      expect(r.json.error.message).toContain(text);
    }
    expect((await data(["team", "show", "tight"])).message_count).toBe(0);

    // Exactly the cap is fine, and a body can come from stdin.
    const cap = await send("tight", "x", "y", "q".repeat(64 * 1024));
    expect(cap.message.body.length).toBe(64 * 1024);
    const piped = await data(["team", "send", "tight", "--from", "y", "--to", "x", "--body-file", "-"], "line one\n--line two\n");
    expect(piped.message.body).toBe("line one\n--line two\n");
  });

  test("human views", async () => {
    const r = await li(["team", "receive", "ops", "--as", "ann", "--peek"], { env: h.env });
    expect(r.stdout).toMatch(/^ID\s+FROM\s+TO/);
    expect(r.stdout).toContain("(peek: nothing marked read)");
    const show = await li(["team", "show", "ops"], { env: h.env });
    expect(show.stdout).toMatch(/members:\nNAME\s+SENT\s+RECEIVED\s+UNREAD/);
    const help = await li(["team", "send", "--help"], { env: h.env });
    expect(help.stdout).toContain("Examples:");
  });
});
