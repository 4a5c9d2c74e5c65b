/**
 * Issues 38 and 39 together: a contained run that asks. Its worker's approval channel is a socket
 * under $LI_HOME, which the sandbox hides; the sandbox shows that one socket through, so the agent's
 * request reaches a person, and the answer (allow or deny with a message) reaches the agent.
 */
import fs from "node:fs";
import { pendingNo } from "./helpers/approvals.js";
import { detach, output, terminal, useHomes } from "./helpers/fixtures.js";
import { liData } from "./helpers/li.js";
import { sandboxSuite } from "./helpers/sandbox.js";

const describeSandbox = sandboxSuite("sandbox-approvals.test.ts");

describeSandbox("a sandboxed run that asks", () => {
  const home = useHomes({ stopRuns: true });

  test("its requests reach li through the sandbox: one allowed, one denied with a message, and the sandbox refused neither", async () => {
    // A short $LI_HOME (a long one is test/sandbox-channels.test.ts's: the socket stays in the run's
    // directory either way).
    const short = fs.mkdtempSync("/tmp/li-");
    const h = { ...home(), home: short };
    h.env = { ...h.env, LI_HOME: short };
    const prompt = ['ask Bash {"command":"npm test"}', 'ask Write {"file_path":"x.txt"}'].join("\n");
    const run = (await detach(h.env, ["--sandbox", "workspace", "--approvals", "ask", "mock/ask", prompt])).id;
    const first = await pendingNo(h, run, 1);
    expect((await liData(["job", "status", run], { env: h.env })).jobs[0].waiting_for).toBe(`approval ${first.id}`);
    expect(first.tool).toBe("Bash");
    expect((await liData(["approve", first.id], { env: h.env })).approval.state).toBe("allowed");
    const second = await pendingNo(h, run, 2);
    expect(second.tool).toBe("Write");
    expect((await liData(["deny", second.id, "--message", "use the test script"], { env: h.env })).approval.state).toBe("denied");

    const end = await terminal(h.env, run);
    expect(end.status).toBe("completed");
    const text = (await output(h.env, run)).output as string;
    expect(text).toContain('allowed Bash {"command":"npm test"}');
    expect(text).toContain("denied Write use the test script");
    expect(end.sandbox.mode).toBe("workspace");
    expect(JSON.stringify(end.sandbox.denials)).not.toContain("approval");
    fs.rmSync(short, { recursive: true, force: true });
  });
});
