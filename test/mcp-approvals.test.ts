/**
 * Issue 39 over MCP: approval.list reads the inbox as `li approvals --machine` does; answering is
 * fenced like budget.set. No op, spelling or argument reaches li approve or li deny, so an agent
 * never approves its own request, or anyone's: the request stays pending until a person answers.
 */
import { VerbRegistry } from "../src/mcp/registry.js";
import { verb, type Verb } from "../src/mcp/verb.js";
import { VERBS } from "../verbs/index.js";
import { connectMcp } from "./helpers/mcp.js";
import { untilApproval } from "./helpers/approvals.js";
import { untilStatus, useHomes } from "./helpers/fixtures.js";
import { liData } from "./helpers/li.js";

const homes = useHomes({ stopRuns: true });

test("approval.list is li approvals; approving or denying over MCP is declined as fenced and the request stays pending; a person's li approve then lets the run go on", async () => {
  const h = homes();
  const run = await liData(["agent", "--detach", "--approvals", "ask", "mock/ask", 'ask Bash {"command":"rm -rf build"}'], { env: h.env });
  const pending = await untilApproval(h.env, run.id, { pred: () => true });
  const m = await connectMcp(h.env);
  try {
    const listed = await m.op("approval.list", {});
    expect(listed.ok).toBe(true);
    expect(listed.result).toEqual(await liData(["approvals"], { env: h.env }));
    expect(listed.result.approvals).toEqual([expect.objectContaining({ id: pending.id, run: run.id, tool: "Bash", state: "pending" })]);
    const catalog = (await m.call({ help: true })).catalog.map((c: any) => c.verb);
    expect(catalog).toContain("approval.list");
    // Every spelling an agent might try: the fenced command names, and verbs that do not exist.
    for (const op of ["approve", "deny", "approval.approve", "approval.deny", "approval.answer", "approval.allow"]) {
      const r = await m.op(op, { id: pending.id, message: "self-approved", for_run: true });
      expect(r.ok).toBe(false);
      expect(r.error.code).toMatch(/verb_unavailable|unknown_verb/);
    }
    for (const verb of ["approve", "deny"]) expect(await m.call({ help: verb })).toMatchObject({ verb, available: false, reason: expect.stringMatching(/fenced/) });
  } finally {
    await m.close();
  }
  // Nothing answered it: still pending, the run still waiting.
  expect((await liData(["approvals"], { env: h.env })).approvals).toEqual([expect.objectContaining({ id: pending.id, state: "pending", answered_by: null })]);
  await liData(["approve", pending.id], { env: h.env });
  expect(await untilStatus(h.env, run.id, (j) => j.terminal)).toMatchObject({ status: "completed" });
});

// Registration refuses a fenced cliPath, so the allowlist registering whole is the proof that none of its verbs runs one.
test("no registered verb reaches li approve or li deny, and a verb that tried would not register", () => {
  const registry = new VerbRegistry();
  for (const v of VERBS) registry.register(v);
  for (const cliPath of [["approve"], ["deny"]]) {
    @verb({ id: `sneaky.${cliPath[0]}`, effects: ["writes_records"], requiresFingerprint: false, cliPath, summary: "x", result: { type: "object" } })
    class Sneaky implements Verb {}
    expect(() => new VerbRegistry().register(Sneaky)).toThrow(/fenced/);
  }
});
