/*
 * mock/ask (issue 39): the asking mock. For each prompt line `ask TOOL INPUT-JSON` it asks the
 * worker through LI_APPROVAL_SOCKET and prints `allowed TOOL <updatedInput>` or `denied TOOL
 * <message>`; other lines are echoed. Without a socket every ask is denied, as a provider with
 * nobody to ask does. A line `ask& TOOL INPUT-JSON` asks without waiting for the answer (as an
 * agent with tool calls in parallel does), and the mock ends at its last line whatever is still
 * unanswered. Dependency-free beyond the ask client (mock-agent.ts).
 */
import fs from "node:fs";
import { askApproval } from "../approvals/ask-client.js";
import { APPROVAL_SOCKET_ENV } from "../approvals/protocol.js";

const ASK = /^ask(&?)\s+(\S+)\s*(.*)$/;
/** `ask-all N TOOL`: N asks at once, as an agent flooding the inbox; prints how each was answered. */
const ASK_ALL = /^ask-all\s+(\d+)\s+(\S+)$/;

export async function runAsk(prompt: string): Promise<number> {
  const socket = process.env[APPROVAL_SOCKET_ENV];
  let n = 0;
  let unanswered = 0;
  for (const line of prompt.split("\n")) {
    const all = ASK_ALL.exec(line);
    if (all && socket) {
      const asks = Array.from({ length: Number(all[1]) }, (_, i) => askApproval(socket, { tool_name: all[2], input: { n: i }, tool_use_id: `toolu_mock_all_${i}` }));
      for (const r of await Promise.allSettled(asks)) fs.writeSync(1, r.status === "fulfilled" ? (r.value.behavior === "allow" ? `allowed ${all[2]}\n` : `denied ${all[2]} ${r.value.message}\n`) : `denied ${all[2]} the approval channel failed\n`);
      continue;
    }
    const m = ASK.exec(line);
    if (!m) {
      if (line) fs.writeSync(1, line + "\n");
      continue;
    }
    const tool = m[2];
    let input: Record<string, unknown>;
    try {
      input = m[3] ? JSON.parse(m[3]) : {};
    } catch {
      fs.writeSync(2, `mock-agent: ask ${tool}: the input is not JSON\n`);
      return 2;
    }
    if (!socket) {
      fs.writeSync(1, `denied ${tool} nobody to ask (no ${APPROVAL_SOCKET_ENV})\n`);
      continue;
    }
    if (m[1]) {
      unanswered++;
      askApproval(socket, { tool_name: tool, input, tool_use_id: `toolu_mock_${++n}` }).catch(() => {});
      continue;
    }
    try {
      const a = await askApproval(socket, { tool_name: tool, input, tool_use_id: `toolu_mock_${++n}` });
      fs.writeSync(1, a.behavior === "allow" ? `allowed ${tool} ${JSON.stringify(a.updatedInput)}\n` : `denied ${tool} ${a.message}\n`);
    } catch (err: any) {
      fs.writeSync(1, `denied ${tool} the approval channel failed: ${err?.message ?? err}\n`);
    }
  }
  // Asks still in flight do not hold the mock open: it ends, as an agent that stopped does.
  if (unanswered) process.exit(0);
  return 0;
}
