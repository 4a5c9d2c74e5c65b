/*
 * Unattended runs that can ask (issue 39), with the asking mock (mock/ask): a request is a record
 * any host can answer; li approve / li deny answer it once; a rule, an earlier --for-run answer,
 * the timeout or the run's end answer it otherwise. Runs on both stores (ON_BOTH_STORES).
 */
import fs from "node:fs";
import path from "node:path";
import { parseApprovalSettings } from "../src/config/approval-settings.js";
import { MAX_INPUT_BYTES, MAX_MESSAGE_BYTES } from "../src/lifecycle/approvals/records.js";
import { li, liData, sleep, until } from "./helpers/li.js";
import { MAX_STORED } from "../src/runtime/approvals/worker-asks.js";
import { pendingNo, requests } from "./helpers/approvals.js";
import { allowWrites, detach, jobStatus, output, refuseWrites, rows, terminal, untilStatus, useHomes, withStore, type Home } from "./helpers/fixtures.js";
import { oneStore } from "./helpers/stores.js";

const home = useHomes({ stopRuns: true });

const ask = (tool: string, input: object) => `ask ${tool} ${JSON.stringify(input)}`;

const consoleText = async (h: Home, id: string) => (await output(h.env, id)).output as string;

test("ask → pending (waiting_for, li approvals, one notice) → li approve --for-run answers it and the run's next same command; li deny --message reaches the agent", async () => {
  const h = home();
  const notices = path.join(h.home, "notices.jsonl");
  fs.writeFileSync(
    path.join(h.home, "settings.yaml"),
    `notify:\n  on_terminal:\n    - {name: phone, exec: ["/usr/bin/tee", "-a", "${notices}"], kinds: [approval.requested]}\n  retry: {max_attempts: 3, backoff_seconds: 0.1}\n`,
  );
  const prompt = ["hello", ask("Bash", { command: "npm test" }), ask("Bash", { command: "'npm' test" }), ask("Write", { file_path: "x.txt" }), "bye"].join("\n");
  const run = (await detach(h.env, ["--approvals", "ask", "mock/ask", prompt])).id;

  const first = await pendingNo(h, run, 1);
  expect(first).toMatchObject({ tool: "Bash", input: JSON.stringify({ command: "npm test" }), state: "pending", answered_by: null });
  const job = await jobStatus(h.env, run);
  expect([job.status, job.waiting_for]).toEqual(["running", `approval ${first.id}`]);
  // li wait names what the run waits for in its progress (one JSON line per look under LI_PROGRESS_JSON).
  const waited = await li(["--machine", "wait", run, "--max-wait-seconds", "0.3", "--poll-interval-seconds", "0.1"], { env: { ...h.env, LI_PROGRESS_JSON: "1" } });
  const looks = waited.stderr.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l).li_progress);
  expect(looks[0].waiting_for).toEqual({ [run]: `approval ${first.id}` });
  const listed = (await liData(["approvals"], { env: h.env })).approvals;
  expect(listed.map((a: any) => [a.id, a.run, a.tool, a.state])).toEqual([[first.id, run, "Bash", "pending"]]);

  // Bad input is refused and writes nothing: an unknown id, a message over the bound.
  const unknown = await li(["--machine", "approve", "apr_0000000000zzzzzzzzzzzzzzzz"], { env: h.env });
  expect([unknown.json.ok, unknown.json.error.kind]).toEqual([false, "not_found"]);
  const long = await li(["--machine", "approve", first.id, "--message", "x".repeat(MAX_MESSAGE_BYTES + 1)], { env: h.env });
  expect([long.json.ok, long.json.error.kind, long.json.error.detail.max]).toEqual([false, "invalid_input", MAX_MESSAGE_BYTES]);
  expect((await requests(h, run))[0].state).toBe("pending");

  const approved = (await liData(["approve", first.id.slice(0, 14), "--for-run", "--message", "fine"], { env: h.env })).approval;
  expect(approved).toMatchObject({ id: first.id, state: "allowed", for_run: true, for_run_scope: "commands", message: "fine", answered_by: expect.stringMatching(/^.+@.+$/) });

  // The next Bash, the same words quoted otherwise, is answered by that --for-run answer: no person sees it pending; Write asks anew.
  const third = await pendingNo(h, run, 3);
  expect(third.tool).toBe("Write");
  const second = (await requests(h, run))[1];
  expect(second).toMatchObject({ tool: "Bash", state: "allowed", answered_by: approved.answered_by, message: `allowed for the run by ${approved.answered_by} (${first.id}: the same commands (--for-run)): fine` });
  await liData(["deny", third.id, "--message", "use the test script"], { env: h.env });

  expect((await terminal(h.env, run)).status).toBe("completed");
  expect(await consoleText(h, run)).toBe(
    ["hello", 'allowed Bash {"command":"npm test"}', `allowed Bash {"command":"'npm' test"}`, "denied Write use the test script", "bye", ""].join("\n"),
  );
  expect((await jobStatus(h.env, run)).waiting_for).toBeNull();

  // One notice per request a person had to answer, with the exact commands that answer it.
  const envelopes = await until(() => {
    const l = fs.existsSync(notices) ? fs.readFileSync(notices, "utf8").split("\n").filter(Boolean).map((x) => JSON.parse(x)) : [];
    return l.length >= 2 ? l : null;
  });
  await sleep(500); // any duplicate would have arrived by now
  const after = fs.readFileSync(notices, "utf8").split("\n").filter(Boolean).map((x) => JSON.parse(x));
  expect(after).toEqual(envelopes);
  expect(envelopes!.map((e: any) => [e.event, e.approval.id, e.commands.approve, e.commands.deny])).toEqual([
    ["approval.requested", first.id, `li approve ${first.id}`, `li deny ${first.id}`],
    ["approval.requested", third.id, `li approve ${third.id}`, `li deny ${third.id}`],
  ]);
});

test("two answers at once: exactly one wins, the other is refused naming the state it found, and the agent gets the winner's", async () => {
  const h = home();
  const run = (await detach(h.env, ["--approvals", "ask", "mock/ask", ask("Bash", { command: "make deploy" })])).id;
  const req = await pendingNo(h, run, 1);
  const [a, d] = await Promise.all([li(["--machine", "approve", req.id], { env: h.env }), li(["--machine", "deny", req.id, "--message", "no"], { env: h.env })]);
  const results = [a.json, d.json];
  expect(results.filter((r) => r.ok)).toHaveLength(1);
  const winner = results.find((r) => r.ok).data.approval;
  const loser = results.find((r) => !r.ok).error;
  expect(loser.kind).toBe("conflict");
  expect(loser.detail).toMatchObject({ id: req.id, state: winner.state });
  expect(loser.message).toContain(`already ${winner.state}`);
  await terminal(h.env, run);
  expect(await consoleText(h, run)).toBe(winner.state === "allowed" ? 'allowed Bash {"command":"make deploy"}\n' : "denied Bash no\n");
  expect((await requests(h, run)).map((r) => r.state)).toEqual([winner.state]);
});

// PostgreSQL only (SQLite has no notification path: its worker polls every 250 ms).
(process.env.LI_TEST_STORE === "postgres" ? test : test.skip)("on PostgreSQL an answer wakes the waiting worker at once (NOTIFY), not at its next read of the record", async () => {
  const h = home();
  // The worker reads its request once, then not again for ten minutes: only the notification can wake it.
  const run = (await detach({ ...h.env, LI_TEST_APPROVAL_POLL_MS: "600000" }, ["--approvals", "ask", "mock/ask", ask("Bash", { command: "ls" })])).id;
  const first = await pendingNo(h, run, 1);
  await liData(["approve", first.id], { env: h.env });
  expect((await terminal(h.env, run)).status).toBe("completed");
  expect(await consoleText(h, run)).toBe('allowed Bash {"command":"ls"}\n');
});

test("a request nobody answers expires at --approval-timeout: recorded expired by the timeout, and the run goes on denied", async () => {
  const h = home();
  const run = (await detach(h.env, ["--approvals", "ask", "--approval-timeout", "2", "mock/ask", [ask("Bash", { command: "ls" }), "after"].join("\n")])).id;
  expect((await terminal(h.env, run)).status).toBe("completed");
  const [r] = await requests(h, run);
  expect(r).toMatchObject({ state: "expired", answered_by: "timeout", message: expect.stringContaining("nobody answered within 2s") });
  expect(await consoleText(h, run)).toMatch(/^denied Bash expired: nobody answered within 2s.*\nafter\n$/);
  const late = await li(["--machine", "approve", r.id], { env: h.env });
  expect([late.json.ok, late.json.error.detail.state]).toEqual([false, "expired"]);
});

test("a store that refuses the request's write: the worker retries, and the request is recorded and answered once the store takes it", async () => {
  const h = home();
  await withStore(h, (s) => refuseWrites(s, { name: "no_approvals", table: "approvals", event: "INSERT", action: "abort", message: "store away" }));
  const run = (await detach(h.env, ["--approvals", "ask", "mock/ask", ask("Bash", { command: "npm test" })])).id;
  const log = path.join(h.home, "runs", run, "worker.log");
  await until(() => fs.existsSync(log) && fs.readFileSync(log, "utf8").includes("recording the approval request failed, retrying"));
  expect(await requests(h, run)).toEqual([]);
  await withStore(h, (s) => allowWrites(s, "no_approvals", "approvals"));
  const req = await pendingNo(h, run, 1);
  await liData(["approve", req.id], { env: h.env });
  await terminal(h.env, run);
  expect(await consoleText(h, run)).toBe('allowed Bash {"command":"npm test"}\n');
});

test("a worker killed -9 while waiting: after the reap its request is cancelled, and a late approve is refused naming that", async () => {
  const h = home();
  const run = (await detach(h.env, ["--approvals", "ask", "mock/ask", ask("Bash", { command: "sleep 1" })])).id;
  const req = await pendingNo(h, run, 1);
  const { pid } = await jobStatus(h.env, run);
  process.kill(pid, "SIGKILL");
  const ended = await untilStatus(h.env, run, (j) => j.terminal);
  expect(ended.status).toBe("lost");
  const [r] = await requests(h, run);
  expect(r).toMatchObject({ id: req.id, state: "cancelled", answered_by: "reap" });
  const late = await li(["--machine", "approve", req.id], { env: h.env });
  expect([late.json.ok, late.json.error.kind, late.json.error.detail.state]).toEqual([false, "conflict", "cancelled"]);
  expect(late.json.error.message).toContain("cancelled");
});

test("a run that ends with asks outstanding stops waiting at once: its worker exits, and every request still pending is cancelled by the run's end", async () => {
  const h = home();
  // Five asks in flight, then one the test answers; the agent then ends with the five unanswered.
  const prompt = [...[1, 2, 3, 4, 5].map((i) => `ask& Bash ${JSON.stringify({ command: `echo ${i}` })}`), ask("Read", { file_path: "a.txt" })].join("\n");
  const run = (await detach(h.env, ["--approvals", "ask", "mock/ask", prompt])).id;
  const last = await until(async () => {
    const r = await requests(h, run);
    return r.length === 6 && r.every((x) => x.state === "pending") ? r.find((x) => x.tool === "Read") : null;
  });
  const { pid } = await jobStatus(h.env, run);
  await liData(["approve", last.id], { env: h.env });
  expect((await terminal(h.env, run)).status).toBe("completed");
  // The default approval timeout is 30 minutes: a worker that kept polling would outlive this wait.
  await until(() => {
    try {
      process.kill(pid, 0);
      return false;
    } catch {
      return true;
    }
  });
  const ended = await requests(h, run);
  expect(ended.filter((r) => r.tool === "Bash").map((r) => r.state)).toEqual(["cancelled", "cancelled", "cancelled", "cancelled", "cancelled"]);
  expect(ended.find((r) => r.tool === "Read").state).toBe("allowed");
  expect(fs.readFileSync(path.join(h.home, "runs", run, "worker.log"), "utf8")).not.toMatch(/failed, retrying/);
});

test("rules in the user's settings answer first, recorded as rule:<n>, and no person sees them pending (a fan-out's workers too); a project file may not allow", async () => {
  const h = home();
  fs.writeFileSync(
    path.join(h.home, "settings.yaml"),
    `approvals:\n  rules:\n    - {tool: shell, command: "npm test", answer: allow}\n    - {tool: Bash, command: "npm run lint", answer: allow}\n    - {tool: Bash, input_matches: "^rm ", answer: deny}\n    - {tool: Write, answer: deny}\n`,
  );
  // A secret li knows of (a credential-like variable of the agent's environment) is masked in the record, and the input bounded.
  const secret = "s3cr3t-value-of-the-token";
  const env = { ...h.env, DEPLOY_TOKEN: secret };
  const big = { token: secret, content: "x".repeat(MAX_INPUT_BYTES * 2) };
  const prompt = [ask("Bash", { command: "npm test" }), ask("Bash", { command: "rm -rf build" }), ask("Write", big)].join("\n");
  const run = (await detach(env, ["--approvals", "ask", "mock/ask", prompt])).id;
  expect((await terminal(h.env, run)).status).toBe("completed");
  const recorded = await requests(h, run);
  expect(recorded.map((r) => [r.state, r.answered_by])).toEqual([
    ["allowed", "rule:0"],
    ["denied", "rule:2"],
    ["denied", "rule:3"],
  ]);
  expect(Buffer.byteLength(recorded[2].input)).toBeLessThanOrEqual(MAX_INPUT_BYTES);
  expect(recorded[2].input).not.toContain(secret);
  expect(JSON.parse(recorded[2].input)).toMatchObject({ truncated: true, head: expect.stringContaining('"token":"***"') });
  expect(await consoleText(h, run)).toMatch(/^allowed Bash \{"command":"npm test"\}\ndenied Bash denied by rule 2 of .*\ndenied Write denied by rule 3 of .*\n$/);
  expect((await liData(["approvals"], { env: h.env })).approvals).toEqual([]);
  // A fan-out's workers ask too (--approvals on li o fanout reaches each worker's run).
  const ses = (await liData(["o", "fanout", "--detach", "--approvals", "ask", "--model", "mock/ask", "--num-workers", "1", ask("Bash", { command: "npm run lint" })], { env: h.env })).id;
  expect((await terminal(h.env, ses)).status).toBe("completed");
  const worker = (await rows<any>(h, "SELECT id FROM entities WHERE parent_id = ?", [ses]))[0].id;
  expect((await requests(h, worker)).map((r) => [r.tool, r.state, r.answered_by])).toEqual([["Bash", "allowed", "rule:1"]]);
  expect(() => parseApprovalSettings("/p/.li/settings.yaml", { rules: [{ tool: "Bash", answer: "allow" }] }, "project")).toThrow(/a project file may only deny/);
  expect(parseApprovalSettings("/p/.li/settings.yaml", { rules: [{ tool: "Bash", answer: "deny" }] }, "project")).toHaveLength(1);
});

oneStore("approvals: ask on a provider without a route is refused approvals_unsupported before any record", async () => {
  const h = home();
  const fanout = await li(["--machine", "o", "fanout", "--approvals", "ask", "--model", "mock/echo", "hi"], { env: h.env });
  expect([fanout.json.ok, fanout.json.error.detail.code]).toEqual([false, "approvals_unsupported"]);
  for (const model of ["openai/gpt-4o", "mock/echo"]) {
    const r = await li(["--machine", "agent", "--detach", "--approvals", "ask", model, "hi"], { env: h.env });
    expect([r.json.ok, r.json.error.kind, r.json.error.detail.code, r.json.error.detail.provider]).toEqual([false, "invalid_input", "approvals_unsupported", model.split("/")[0]]);
    expect(r.json.error.message).toContain(model);
  }
  expect(await rows(h, "SELECT id FROM entities")).toEqual([]);
});

// Issue 46, item 5: the structured record of a rule's answer (schema step 15), on both stores.
test("a run stores at most MAX_STORED requests, answered ones too: past it each ask is denied at once, unstored, counted in spec.approvals_refused, and the run goes on", async () => {
  const h = home();
  // A deny rule answers each at once, so none waits for a person (the pending cap never applies): only the stored cap can stop them.
  fs.writeFileSync(path.join(h.home, "settings.yaml"), `approvals:\n  rules:\n    - {tool: Bash, answer: deny}\n`);
  const over = 7;
  const half = Math.ceil((MAX_STORED + over) / 2);
  const prompt = [`ask-all ${half} Bash`, `ask-all ${MAX_STORED + over - half} Bash`, "still running"].join("\n");
  const run = (await detach(h.env, ["--approvals", "ask", "mock/ask", prompt])).id;
  expect((await terminal(h.env, run, 120_000)).status).toBe("completed");
  const [{ n }] = await rows<any>(h, "SELECT count(*) AS n FROM approvals WHERE entity_id = ?", [run]);
  expect(Number(n)).toBe(MAX_STORED);
  const text = await consoleText(h, run);
  expect(text.match(/denied Bash denied by rule 0/g)).toHaveLength(MAX_STORED);
  expect(text.match(new RegExp(`already made ${MAX_STORED} approval requests`, "g"))).toHaveLength(over);
  expect(text).toMatch(/still running\n$/);
  await until(async () => JSON.parse((await rows<any>(h, "SELECT spec FROM entities WHERE id = ?", [run]))[0].spec).approvals_refused === over);
}, 180_000);

test("a rule's answer records which rule of which file, and for a compound command which command matched which rule (rule_matches); shown by li approvals", async () => {
  const h = home();
  const settings = path.join(h.home, "settings.yaml");
  fs.writeFileSync(settings, `approvals:\n  rules:\n    - {tool: shell, command: "npm test", answer: allow}\n    - {tool: Bash, command: "tail -5", answer: allow}\n    - {tool: Write, answer: deny}\n    - {tool: shell, command: "rm", answer: deny}\n`);
  // The largest: 300 allowed commands in one request; the record names the first 200 and counts the rest.
  const many = Array.from({ length: 300 }, () => "npm test").join("; ");
  const asks = [ask("Bash", { command: "npm test | tail -5" }), ask("Write", { file_path: "a.txt" }), ask("Bash", { command: "npm test && rm -rf ~" }), ask("Bash", { command: many }), ask("Bash", { command: "git status" })];
  const run = (await detach(h.env, ["--approvals", "ask", "--approval-timeout", "1", "mock/ask", asks.join("\n")])).id;
  expect((await terminal(h.env, run, 60_000)).status).toBe("completed");
  const listed = (await liData(["approvals", "--all", "--run", run], { env: h.env })).approvals.reverse();
  expect(listed.map((a: any) => [a.state, a.answered_by, a.rule_matches?.slice(0, 2) ?? null])).toEqual([
    ["allowed", "rule:0,1", [{ rule: 0, file: settings, command: "npm test" }, { rule: 1, file: settings, command: "tail -5" }]],
    ["denied", "rule:2", [{ rule: 2, file: settings }]],
    ["denied", "rule:3", [{ rule: 3, file: settings, command: "rm -rf ~" }]],
    ["allowed", "rule:0", [{ rule: 0, file: settings, command: "npm test" }, { rule: 0, file: settings, command: "npm test" }]],
    ["expired", "timeout", null],
  ]);
  expect([listed[3].rule_matches.length, listed[3].rule_matches.at(-1)]).toEqual([200, { rule: 0, file: settings, command: "npm test", more: 100 }]);
  // The human view names each command's rule.
  const human = await li(["approvals", "--all", "--run", run], { env: h.env });
  expect(human.stdout).toContain("rule:0,1 (0: npm test; 1: tail -5)");
  expect(human.stdout).toContain("rule:3 (3: rm -rf ~)");
});
