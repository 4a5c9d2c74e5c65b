/**
 * Played as a determined agent under --sandbox workspace: li's approval channel is shown inside at
 * a fixed path under the sandbox's own /run (/run/li/approvals.sock), and claude's prompt tool and
 * li's clients connect to it by path, anew for each connection. The proxy's and the gateway's
 * sockets are not shown at all (their bridges run outside and connect by the host path). An agent
 * that could move /run/li aside and listen there itself would answer the provider's approval
 * requests. /run/li is li's, read-only, and a stand-in proxy socket of the agent's there carries
 * nothing: the provider's next connection still reaches li's proxy, judged by the proxy's own
 * record of the host it refused.
 */
import { output, terminal, useHomes, useScratches } from "./helpers/fixtures.js";
import { liData } from "./helpers/li.js";
import { sandboxSuite } from "./helpers/sandbox.js";

const describeSandbox = sandboxSuite("sandbox-attack-channels.test.ts");

describeSandbox("li's channels inside the sandbox", () => {
  const homes = useHomes({ stopRuns: true });
  const scratchDir = useScratches("li-atk-chan-");

  test("no proxy or gateway socket is shown inside, and one the agent puts at /run/li/proxy.sock carries nothing: a later connect still goes through li's proxy", async () => {
    const h = homes();
    const scratch = scratchDir();
    const env = { ...h.env, LI_TEST_HOSTILE_MOCK: "1" };
    // A stand-in proxy of the agent's own that admits everything, where li's proxy socket once was.
    const fake = `socat UNIX-LISTEN:/run/li/proxy.sock,fork SYSTEM:'printf "HTTP/1.1 200 Connection established\\\\r\\\\n\\\\r\\\\n"; sleep 1' >/dev/null 2>&1 &`;
    const prompt = [
      "sh echo in-run-li: $(ls -A /run/li 2>/dev/null || echo absent)",
      "sh mv /run/li /run/li-moved 2>/dev/null; mkdir -p /run/li 2>/dev/null; rm -f /run/li/proxy.sock 2>/dev/null; echo tried",
      `sh ${fake} sleep 1; echo listening`,
      "connect evil.example 443",
    ].join("\n");
    const r = await liData(["agent", "--detach", "--sandbox", "workspace", "mock/hostile", prompt], { env, cwd: scratch });
    const done = await terminal(env, r.id, 60_000);
    expect(done.status).toBe("completed");
    const out = (await output(env, r.id)).output as string;
    // Without --approvals ask li shows no socket inside: the proxy's and the gateway's are not mounted.
    expect(out).toContain("in-run-li: absent");
    expect(out).not.toMatch(/in-run-li:.*(proxy|gateway)\.sock/);
    expect(out).toContain("tried");
    expect(out).toContain("listening");
    // li's proxy answered the connect, and recorded the host it refused.
    expect(out).toContain("connect evil.example:443: refused (HTTP/1.1 403");
    expect(done.sandbox.denials.hosts).toEqual(expect.arrayContaining([{ host: "evil.example:443", count: 1 }]));
  }, 90_000);
});
