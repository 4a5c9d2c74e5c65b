import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { li, liData, sleep, tempHome, until } from "./helpers/li.js";

/*
 * Terminal notification, black-box: settings on disk, the built CLI, a detached drainer,
 * an exec handler (tee appending each envelope) and a loopback webhook.
 */

interface Hook {
  url: string;
  requests: { body: any; headers: http.IncomingHttpHeaders }[];
  status: number;
  close: () => Promise<void>;
}

async function webhook(status = 200): Promise<Hook> {
  const hook: Hook = { url: "", requests: [], status, close: async () => {} };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      hook.requests.push({ body: JSON.parse(Buffer.concat(chunks).toString("utf8")), headers: req.headers });
      res.writeHead(hook.status).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  hook.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/li`;
  hook.close = () => new Promise((r) => server.close(() => r()));
  return hook;
}

function setup() {
  const t = tempHome();
  const proj = path.join(t.home, "proj");
  fs.mkdirSync(path.join(proj, ".git"), { recursive: true });
  fs.mkdirSync(path.join(proj, ".li"));
  const run = (args: string[]) => li(args, { env: t.env, cwd: proj });
  const data = (args: string[]) => liData(args, { env: t.env, cwd: proj });
  const userSettings = (yaml: string) => fs.writeFileSync(path.join(t.home, "settings.yaml"), yaml);
  const projectSettings = path.join(proj, ".li", "settings.yaml");
  return { ...t, proj, run, data, userSettings, projectSettings };
}

const lines = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : []);

async function settled(data: (a: string[]) => Promise<any>, expected: number) {
  return until(async () => {
    const d = await data(["dispatch", "list"]);
    return d.count === expected && d.deliveries.every((x: any) => x.status === "delivered" || x.status === "failed") ? d.deliveries : null;
  }, 20000, 100);
}

test("an exec handler and a loopback webhook each receive exactly one envelope per terminal transition", async () => {
  const t = setup();
  const hook = await webhook();
  try {
    const out = path.join(t.home, "envelopes.jsonl");
    t.userSettings(`
notify:
  on_terminal:
    - {name: log, exec: ["/usr/bin/tee", "-a", "${out}"]}
    - {name: web, url: "${hook.url}", kinds: [invocation]}
  retry: {max_attempts: 3, backoff_seconds: 0.1}
`);
    const completed = (await t.data(["agent", "mock/echo", "hello"])).id;
    const failed = (await t.data(["agent", "mock/fail:3", "boom"])).id;
    const hanging = (await t.data(["agent", "--detach", "mock/hang", "wait"])).id;
    await until(async () => (await t.data(["job", "status", hanging])).jobs[0].status === "running");
    await t.data(["kill", hanging, "--grace", "0"]);

    const deliveries = await settled(t.data, 6);
    expect(deliveries.every((d: any) => d.status === "delivered" && d.attempts === 1)).toBe(true);
    await sleep(700); // any duplicate would have arrived by now

    const expected: Record<string, string> = { [completed]: "completed", [failed]: "failed", [hanging]: "cancelled" };
    for (const envelopes of [lines(out), hook.requests.map((r) => r.body)]) {
      expect(envelopes).toHaveLength(3);
      expect(envelopes.map((e: any) => e.entity.id).sort()).toEqual(Object.keys(expected).sort());
      for (const e of envelopes) {
        const events = (await t.data(["state", "events", e.entity.id])).events;
        const terminal = events[events.length - 1];
        const record = (await t.data(["job", "status", e.entity.id])).jobs[0];
        expect(e).toEqual({
          contract: "li.terminal",
          version: 1,
          event_id: terminal.id,
          entity: { kind: "invocation", id: record.id },
          previous_status: terminal.from_status,
          status: expected[e.entity.id],
          reason_code: record.reason_code,
          outcome: record.outcome,
          at: record.ended_at,
          artifacts: record.run_dir,
          // mock runs report no usage; provider-results.test.ts checks a claude run's.
          usage: null,
        });
      }
    }
    expect(hook.requests[0].headers["content-type"]).toBe("application/json");
  } finally {
    await hook.close();
    t.cleanup();
  }
});

test("a failing webhook is retried with backoff, then shows failed; retry, ack and purge manage it", async () => {
  const t = setup();
  const hook = await webhook(500);
  try {
    t.userSettings(`notify: {on_terminal: [{name: web, url: "${hook.url}"}], retry: {max_attempts: 3, backoff_seconds: 0.1}}\n`);
    const id = (await t.data(["agent", "mock/echo", "hi"])).id;
    const [d] = await settled(t.data, 1);
    expect(d).toMatchObject({ status: "failed", handler: "web", entity_id: id, attempts: 3, max_attempts: 3, last_error: "HTTP 500 Internal Server Error", type: "webhook" });
    expect((await t.data(["dispatch", "list", "--status", "failed"])).deliveries.map((x: any) => x.id)).toEqual([d.id]);
    expect(hook.requests.map((r) => r.headers["x-li-delivery-attempt"])).toEqual(["1", "2", "3"]);
    expect(new Set(hook.requests.map((r) => r.body.event_id)).size).toBe(1);

    const shown = (await t.data(["dispatch", "show", d.id.slice(0, 12)])).delivery;
    expect(shown.id).toBe(d.id);
    expect(shown.payload).toEqual(hook.requests[0].body);

    hook.status = 204;
    const retried = await t.data(["dispatch", "retry", d.id]);
    expect(retried.delivery).toMatchObject({ status: "pending", attempts: 0 });
    const [done] = await settled(t.data, 1);
    expect(done).toMatchObject({ status: "delivered", attempts: 1, last_error: null });
    expect(hook.requests).toHaveLength(4);

    const again = await t.run(["--machine", "dispatch", "retry", d.id]);
    expect(again.json.error.kind).toBe("conflict");
    expect((await t.data(["dispatch", "ack", d.id])).previous_status).toBe("delivered");
    expect((await t.data(["dispatch", "purge", "--status", "failed"])).count).toBe(0);
    expect((await t.data(["dispatch", "purge"])).purged).toEqual([d.id]);
    expect((await t.data(["dispatch", "list"])).count).toBe(0);
  } finally {
    await hook.close();
    t.cleanup();
  }
});

test("handlers are validated at load; --notify picks configured handlers and kinds filter", async () => {
  const t = setup();
  try {
    t.userSettings(`notify: {on_terminal: [{name: bad, exec: "/usr/bin/tee /tmp/x | sh"}]}\n`);
    const bad = await t.run(["--machine", "agent", "mock/echo", "x"]);
    expect(bad.code).toBe(2);
    expect(bad.json.error).toMatchObject({ kind: "invalid_input", detail: { key: "notify.on_terminal[0].exec", file: path.join(t.home, "settings.yaml") } });
    expect(bad.json.error.message).toMatch(/shell syntax/);

    const out = path.join(t.home, "selected.jsonl");
    t.userSettings(`
notify:
  on_terminal:
    - {name: sel, exec: "/usr/bin/tee -a ${out}", scope: selected}
    - {name: plays, exec: ["/usr/bin/tee", "-a", "${out}"], kinds: [play]}
  retry: {backoff_seconds: 0.1}
`);
    const unknown = await t.run(["--machine", "agent", "--notify=nope", "mock/echo", "x"]);
    expect(unknown.json.error.kind).toBe("invalid_input");
    expect(unknown.json.error.detail.known).toEqual(["sel", "plays"]);

    await t.data(["agent", "mock/echo", "not selected"]);
    const chosen = (await t.data(["agent", "--notify=sel", "mock/echo", "selected"])).id;
    const [d] = await settled(t.data, 1);
    expect(d).toMatchObject({ handler: "sel", entity_id: chosen, status: "delivered" });
    expect(lines(out).map((e) => e.entity.id)).toEqual([chosen]);
  } finally {
    t.cleanup();
  }
});

test("an openai run records its endpoint's name only; a project endpoint applies only after li hooks trust", async () => {
  const t = setup();
  try {
    t.userSettings(`endpoints: {mine: {base_url: "http://127.0.0.1:9/v1"}, other: {base_url: "http://127.0.0.1:7/v1"}}\ndefault_endpoint: mine\n`);
    const specOf = async (args: string[]) =>
      (await t.data(["state", "show", (await t.data(["agent", "--detach", ...args, "openai/m", "hi"])).id])).record.spec;
    const spec = await specOf([]);
    expect(spec.endpoint).toBe("mine");
    expect(JSON.stringify(spec)).not.toContain("127.0.0.1:9");
    expect((await specOf(["--endpoint=other"])).endpoint).toBe("other");

    fs.writeFileSync(t.projectSettings, `endpoints: {proj: {base_url: "http://127.0.0.1:8/v1"}}\ndefault_endpoint: proj\n`);
    const untrusted = await t.run(["--machine", "agent", "--endpoint=proj", "openai/m", "hi"]);
    expect(untrusted.json.error.message).toMatch(/endpoint proj is not defined.*not trusted, so li ignores it.*li hooks trust/);
    expect(untrusted.stderr).toMatch(/ignoring .*\(its endpoints proj\).*not trusted/);
    await t.data(["hooks", "trust", t.projectSettings]);
    expect((await specOf([])).endpoint).toBe("proj");
  } finally {
    t.cleanup();
  }
});

test("project handlers run only after li hooks trust, and an edit withdraws them", async () => {
  const t = setup();
  try {
    const out = path.join(t.home, "project.jsonl");
    fs.writeFileSync(t.projectSettings, `notify: {on_terminal: [{name: proj, exec: ["/usr/bin/tee", "-a", "${out}"]}], retry: {backoff_seconds: 0.1}}\n`);

    const untrusted = await t.run(["--machine", "agent", "mock/echo", "a"]);
    expect(untrusted.json.ok).toBe(true);
    expect(untrusted.stderr).toMatch(/not trusted.*li hooks trust/);
    expect((await t.data(["dispatch", "list"])).count).toBe(0);
    const listed = await t.data(["hooks", "list"]);
    expect(listed.files).toEqual([expect.objectContaining({ path: t.projectSettings, trust: "untrusted" })]);
    expect(listed.handlers).toEqual([expect.objectContaining({ name: "proj", active: false })]);
    expect((await t.run(["--machine", "agent", "--notify=proj", "mock/echo", "x"])).json.error.message).toMatch(/not trusted/);

    const trusted = await t.data(["hooks", "trust"]);
    expect(trusted).toMatchObject({ path: fs.realpathSync(t.projectSettings), handlers: [{ name: "proj", exec: ["/usr/bin/tee", "-a", out] }] });
    expect(fs.statSync(path.join(t.home, "trust.json")).mode & 0o777).toBe(0o600);
    const id = (await t.data(["agent", "mock/echo", "b"])).id;
    await settled(t.data, 1);
    expect(lines(out).map((e) => e.entity.id)).toEqual([id]);

    fs.appendFileSync(t.projectSettings, "# edited\n");
    const changed = await t.run(["--machine", "agent", "mock/echo", "c"]);
    expect(changed.stderr).toMatch(/changed since it was trusted/);
    expect((await t.data(["dispatch", "list"])).count).toBe(1);
    expect((await t.data(["hooks", "list"])).files[0].trust).toBe("changed");
  } finally {
    t.cleanup();
  }
});
