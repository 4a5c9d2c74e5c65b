import fs from "node:fs";
import path from "node:path";
import { li, tempHome } from "./helpers/li.js";

/** Records every module URL the process resolves, via a module.register resolve hook. */
function tracer(dir: string): { env: Record<string, string>; loaded: () => string[] } {
  const log = path.join(dir, "modules.log");
  const hooks = path.join(dir, "hooks.mjs");
  fs.writeFileSync(
    hooks,
    `import fs from "node:fs";
export async function resolve(spec, ctx, next) { const r = await next(spec, ctx); fs.appendFileSync(${JSON.stringify(log)}, r.url + "\\n"); return r; }`,
  );
  const register = path.join(dir, "register.mjs");
  fs.writeFileSync(register, `import { register } from "node:module"; register(${JSON.stringify("file://" + hooks)});`);
  return { env: { NODE_OPTIONS: `--import=${register}` }, loaded: () => fs.readFileSync(log, "utf8").split("\n").filter(Boolean) };
}

test("a read command loads neither the MCP SDK, ajv nor tsyringe", async () => {
  const h = tempHome();
  try {
    const t = tracer(h.home);
    const r = await li(["--machine", "job", "list"], { env: { ...h.env, ...t.env } });
    expect(r.json?.ok).toBe(true);
    const loaded = t.loaded();
    expect(loaded.some((u) => u.includes("/dist/src/cli/commands/job.js"))).toBe(true);
    expect(loaded.filter((u) => /@modelcontextprotocol|\/ajv\/|\/tsyringe\/|\/execa\//.test(u))).toEqual([]);
    // The lazy registry imports only the selected command's module.
    expect(loaded.filter((u) => /\/dist\/src\/cli\/commands\//.test(u)).map((u) => path.basename(u))).toEqual(["job.js"]);
  } finally {
    h.cleanup();
  }
});
