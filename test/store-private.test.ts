import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { rows, useHomes } from "./helpers/fixtures.js";
import { liData, until } from "./helpers/li.js";
import { FIXTURES } from "./helpers/standins.js";
import { oneStore } from "./helpers/stores.js";

/*
 * D9: nothing outside li gains a second write path into the store, so the store's URL and the
 * credentials li reaches it with never reach a program li starts that is not li: an agent, a
 * terminal-notify handler. In the postgres project every home's store is LI_STORE; in the
 * sqlite project LI_STORE is unset and the same checks prove nothing is added, and that a user's
 * libpq variables still reach their agents when no PostgreSQL store is in use.
 */

const home = useHomes({ stopRuns: true });
const onPostgres = process.env.LI_TEST_STORE === "postgres";

/** A stand-in `claude` that writes its whole environment to $ENV_DUMP/agent-<pid>.json, then answers the success stream. */
const AGENT = `#!${process.execPath}
const fs = require("node:fs");
fs.readFileSync(0);
fs.writeFileSync(process.env.ENV_DUMP + "/agent-" + process.pid + ".json", JSON.stringify(process.env));
process.stdout.write(fs.readFileSync(${JSON.stringify(path.join(FIXTURES, "claude", "success.jsonl"))}));
`;

/** A notify exec handler that writes its environment and the envelope it was given. */
const HANDLER = `const fs = require("node:fs");
const envelope = fs.readFileSync(0, "utf8");
fs.writeFileSync(process.argv[2] + "/handler-" + process.pid + ".json", JSON.stringify({ env: process.env, envelope }));
`;

function setup() {
  const h = home();
  // Outside LI_HOME: the dumps hold what the programs saw, the grep of LI_HOME below must not find them.
  const dumps = fs.mkdtempSync(path.join(os.tmpdir(), "li-env-"));
  const bin = path.join(dumps, "bin");
  fs.mkdirSync(bin);
  fs.writeFileSync(path.join(bin, "claude"), AGENT, { mode: 0o755 });
  const handler = path.join(bin, "handler.cjs");
  fs.writeFileSync(handler, HANDLER);
  fs.mkdirSync(path.join(dumps, "out"));
  const password = `pw-${Math.random().toString(36).slice(2)}`;
  const env: NodeJS.ProcessEnv = {
    ...h.env,
    PATH: `${bin}:${process.env.PATH}`,
    ENV_DUMP: path.join(dumps, "out"),
    // What li might be logged in with besides the URL; neither may leave li while its store is PostgreSQL.
    PGPASSWORD: password,
    PGPASSFILE: path.join(dumps, "no-such-pgpass"),
    // Names a server, proves nothing: stays for an agent working on the user's own database.
    PGDATABASE: "users_own_db",
  };
  fs.writeFileSync(
    path.join(h.home, "settings.yaml"),
    `notify:
  on_terminal:
    - {name: envdump, exec: [${JSON.stringify(process.execPath)}, ${JSON.stringify(handler)}, ${JSON.stringify(path.join(dumps, "out"))}]}
profiles:
  granted: {model: claude/sonnet, env: {PGPASSWORD: granted-by-profile, LI_STORE: "postgres://nobody@127.0.0.1:1/none"}}
`,
  );
  const dumped = (prefix: string) =>
    fs
      .readdirSync(path.join(dumps, "out"))
      .filter((f) => f.startsWith(prefix))
      .map((f) => JSON.parse(fs.readFileSync(path.join(dumps, "out", f), "utf8")));
  return { h, env, password, dumped, cleanup: () => fs.rmSync(dumps, { recursive: true, force: true }) };
}

/** Every file under `dir`, as text. */
function filesUnder(dir: string): { file: string; text: string }[] {
  const out: { file: string; text: string }[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    try {
      out.push({ file, text: fs.readFileSync(file, "latin1") });
    } catch (err: any) {
      // A SQLite sidecar (state.db-shm) a closing connection removed after the listing: nothing to read.
      if (err?.code !== "ENOENT") throw err;
    }
  }
  return out;
}

/** Every row of every table of the store, as one string. */
async function allRows(t: ReturnType<typeof setup>): Promise<string> {
  const tables = onPostgres
    ? await rows<{ name: string }>(t.h, "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema()")
    : await rows<{ name: string }>(t.h, "SELECT name FROM sqlite_master WHERE type = 'table'");
  expect(tables.map((r) => r.name)).toEqual(expect.arrayContaining(["entities", "events", "deliveries"]));
  const all: Record<string, unknown[]> = {};
  for (const { name } of tables) all[name] = await rows(t.h, `SELECT * FROM ${name}`);
  return JSON.stringify(all);
}

test("an agent and a notify handler see neither LI_STORE nor li's store credentials; nothing li records holds the URL", async () => {
  const t = setup();
  try {
    const url = t.h.env.LI_STORE;
    expect(!!url).toBe(onPostgres);
    const run = await liData(["agent", "claude/sonnet", "success", "look"], { env: t.env });
    expect(run.status).toBe("completed");
    const granted = await liData(["agent", "--profile", "granted", "success", "again"], { env: t.env });
    expect(granted.status).toBe("completed");
    const handled = (await until(() => (t.dumped("handler-").length === 2 ? t.dumped("handler-") : null), 20000))!;

    const agents = t.dumped("agent-");
    expect(agents).toHaveLength(2);
    for (const env of [...agents, ...handled.map((d: any) => d.env)]) {
      expect(env.LI_STORE).toBeUndefined();
      // The listen URL beside a pooled store (the postgres project's homes have one) likewise.
      expect(env.LI_STORE_LISTEN).toBeUndefined();
      expect(env.PGDATABASE).toBe("users_own_db");
      expect(env.LI_HOME).toBe(t.h.home);
    }
    const [plain, profiled] = [agents.find((e) => e.PGPASSWORD !== "granted-by-profile"), agents.find((e) => e.PGPASSWORD === "granted-by-profile")];
    // A profile's env is the user's grant to its runs: applied as written, LI_STORE excepted.
    expect(profiled).toBeDefined();
    for (const env of [plain, ...handled.map((d: any) => d.env)]) {
      // Stripped only while li's store is PostgreSQL; otherwise they are the user's own, and reach the agent.
      expect([env.PGPASSWORD, env.PGPASSFILE]).toEqual(onPostgres ? [undefined, undefined] : [t.password, t.env.PGPASSFILE]);
    }
    expect(handled.map((d: any) => JSON.parse(d.envelope).entity.id).sort()).toEqual([run.id, granted.id].sort());

    // Nothing li wrote holds the URL, its database's name or the password: not a record's spec or
    // request, an audit detail, a delivery's payload, a console, a prompt, a log.
    const secrets = onPostgres ? [url!, new URL(url!).pathname.slice(1), t.password, ...(t.h.env.LI_STORE_LISTEN ? [t.h.env.LI_STORE_LISTEN] : [])] : [t.password];
    const written = filesUnder(t.h.home).filter((f) => f.file !== path.join(t.h.home, "settings.yaml"));
    expect(written.map((f) => f.file)).toEqual(expect.arrayContaining([expect.stringMatching(/console\.log$/), expect.stringMatching(/prompt\.txt$/)]));
    for (const secret of secrets) {
      expect(written.filter((f) => f.text.includes(secret)).map((f) => f.file)).toEqual([]);
      expect((await allRows(t)).includes(secret)).toBe(false);
      for (const d of handled) expect(d.envelope.includes(secret)).toBe(false);
    }
  } finally {
    t.cleanup();
  }
});

describe("the rule (childEnv)", () => {
  const saved = { LI_HOME: process.env.LI_HOME, LI_STORE: process.env.LI_STORE };
  afterEach(() => {
    for (const [k, v] of Object.entries(saved)) v === undefined ? delete process.env[k] : (process.env[k] = v);
  });
  const inHome = (settings?: string) => {
    const h = home();
    if (settings) fs.writeFileSync(path.join(h.home, "settings.yaml"), settings);
    process.env.LI_HOME = h.home;
    delete process.env.LI_STORE;
  };
  const base = { PATH: "/bin", PGPASSWORD: "pw", PGPASSFILE: "/p", PGSERVICEFILE: "/s", PGSSLKEY: "/k", PGHOST: "db", PGUSER: "me" };

  oneStore("LI_STORE is always removed, a granted one too; without a PostgreSQL store the user's libpq variables stay", async () => {
    const { childEnv } = await import("../src/lifecycle/child-env.js");
    inHome();
    expect(childEnv({ ...base }, { LI_STORE: "postgres://x@h/d", MINE: "1" })).toEqual({ ...base, MINE: "1" });
  });

  oneStore("LI_STORE_LISTEN (the direct connection beside a pooled store) is kept from every child as LI_STORE is, a granted one too, and handed to li's own processes over the pipe", async () => {
    const { childEnv } = await import("../src/lifecycle/child-env.js");
    const { storeSecrets } = await import("../src/lifecycle/store-handoff.js");
    inHome();
    const listen = "postgres://li:pw@direct/d";
    const kept = { PATH: "/bin", PGHOST: "db", PGUSER: "me" };
    // Its credential variables go too: the listen URL alone says a PostgreSQL store is in use.
    expect(childEnv({ ...base, LI_STORE_LISTEN: listen })).toEqual(kept);
    expect(childEnv({ ...base, LI_STORE: "postgres://li@pooler/d", LI_STORE_LISTEN: listen }, { LI_STORE_LISTEN: listen, MINE: "1" })).toEqual({ ...kept, MINE: "1" });
    expect(storeSecrets({ PATH: "/bin", LI_STORE: "postgres://li@pooler/d", LI_STORE_LISTEN: listen, PGPASSWORD: "pw" })).toEqual({ LI_STORE: "postgres://li@pooler/d", LI_STORE_LISTEN: listen, PGPASSWORD: "pw" });
  });

  oneStore("with LI_STORE, or store: in settings.yaml, the credential variables go and the ones naming a server stay", async () => {
    const { childEnv } = await import("../src/lifecycle/child-env.js");
    const kept = { PATH: "/bin", PGHOST: "db", PGUSER: "me" };
    inHome();
    expect(childEnv({ ...base, LI_STORE: "postgres://li@h/d" })).toEqual(kept);
    inHome("store: postgres://li@h/d\n");
    expect(childEnv({ ...base })).toEqual(kept);
    // A profile's grant is applied as written.
    expect(childEnv({ ...base }, { PGPASSWORD: "granted" })).toEqual({ ...kept, PGPASSWORD: "granted" });
    // A settings file li cannot read: as if the store were PostgreSQL (fail closed).
    inHome("store: [not a url\n");
    expect(childEnv({ ...base })).toEqual(kept);
  });
});
