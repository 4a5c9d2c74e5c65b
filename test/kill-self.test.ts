import { Store } from "../src/lifecycle/store.js";
import { selfStat } from "../src/lifecycle/procfs.js";
import { li } from "./helpers/li.js";
import { openStore, useHomes } from "./helpers/fixtures.js";

const home = useHomes();

test("li kill never signals its caller's own process group; the reap is reported partial instead", async () => {
  const h = home();
  const me = selfStat();
  const s: Store = await openStore(h);
  // A record claiming this test process (and so its group, which a child li kill shares).
  const e = await s.insert({ kind: "invocation" });
  await s.transition({ id: e.id, to: "running", reason: "invocation.running.spawned", source: "runtime", patch: { pid: process.pid, pgid: me.pgrp, proc_start: me.starttime } });
  await s.close();
  const r = await li(["--machine", "kill", "--grace", "0", e.id], { env: h.env });
  // Still alive to read the answer: nothing was signalled, and that is reported, not hidden.
  expect(r.json.ok).toBe(false);
  expect(r.json.error.kind).toBe("conflict");
  expect(r.json.error.detail.entities[0]).toMatchObject({ id: e.id, action: "cancelled", signals: [], process_gone: false });
});
