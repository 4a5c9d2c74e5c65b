/**
 * Issue 50: the pure mappings of the codex and ACP routes, which the rules (issue 46) read. A
 * shell command is recorded under the route's tool name with the command as the shell will run
 * it; an answer is always a once-only option, never an "always" one.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { unwrapShell, requestOf } from "../src/runtime/providers/codex-app-server/requests.js";
import { untrustedProjects } from "../src/runtime/providers/codex-app-server/project-trust.js";
import { askRequestOf, outcomeOf } from "../src/runtime/providers/acp/permission.js";
import { oneStore } from "./helpers/stores.js";

oneStore("codex: bash -lc '…' is unwrapped to the command it runs, quotes restored; anything else is kept as it came", () => {
  expect(unwrapShell("/bin/bash -lc 'touch x && echo hi'")).toBe("touch x && echo hi");
  // codex quotes with Rust shlex: a single quote goes in a double-quoted chunk.
  expect(unwrapShell(`bash -c "echo 'quoted'"`)).toBe("echo 'quoted'");
  expect(unwrapShell(`/bin/bash -lc 'echo '"'\\\\x41'"`)).toBe("echo '\\x41'");
  expect(unwrapShell("/usr/bin/zsh -lc 'ls'")).toBe("ls");
  expect(unwrapShell("ls -la")).toBe("ls -la");
  expect(unwrapShell("/bin/bash -lc 'a' 'b'")).toBe("/bin/bash -lc 'a' 'b'");
  expect(requestOf("item/commandExecution/requestApproval", { itemId: "i1", command: "/bin/bash -lc 'rm -rf build'", cwd: "/w" })).toEqual({
    tool_name: "commandExecution",
    input: { command: "rm -rf build", raw_command: "/bin/bash -lc 'rm -rf build'", cwd: "/w" },
    tool_use_id: "i1",
  });
  expect(requestOf("item/fileChange/requestApproval", { itemId: "i2", grantRoot: "/w" })).toEqual({ tool_name: "fileChange", input: { grant_root: "/w" }, tool_use_id: "i2" });
  expect(requestOf("item/tool/requestUserInput", {})).toBeNull();
});

oneStore("ACP: an execute tool call is the route's shell tool with the command (rawInput only, never the title) and background; others go by kind", () => {
  expect(askRequestOf({ toolCallId: "t1", kind: "execute", title: "ls", rawInput: { command: "npm test", is_background: true } }, "execute")).toEqual({
    tool_name: "execute",
    input: { command: "npm test", is_background: true, background: true, title: "ls" },
    tool_use_id: "t1",
  });
  expect(askRequestOf({ toolCallId: "t2", kind: "execute", title: "touch x" }, "run_shell_command").input).toEqual({ title: "touch x" });
  expect(askRequestOf({ kind: "edit", title: "a.txt", locations: [{ path: "/w/a.txt" }] }, "execute")).toEqual({ tool_name: "edit", input: { title: "a.txt", locations: [{ path: "/w/a.txt" }] }, tool_use_id: "" });
  expect(askRequestOf({}, "execute").tool_name).toBe("other");
});

oneStore("ACP: allow is allow_once and deny is reject_once; never an always option, and cancelled when the once option is missing", () => {
  const all = [
    { optionId: "proceed_always", kind: "allow_always" },
    { optionId: "proceed_once", kind: "allow_once" },
    { optionId: "cancel", kind: "reject_once" },
  ];
  expect(outcomeOf({ behavior: "allow", updatedInput: {} }, all)).toEqual({ outcome: "selected", optionId: "proceed_once" });
  expect(outcomeOf({ behavior: "deny", message: "no" }, all)).toEqual({ outcome: "selected", optionId: "cancel" });
  expect(outcomeOf({ behavior: "allow", updatedInput: {} }, [all[0], all[2]])).toEqual({ outcome: "cancelled" });
  expect(outcomeOf({ behavior: "deny", message: "no" }, [{ optionId: "x", kind: "reject_always" }])).toEqual({ outcome: "cancelled" });
});

oneStore("codex: a run that asks marks its directory and every one above it untrusted, as given and resolved (a project the person trusted in codex loads no .codex of its own)", () => {
  expect(untrustedProjects("/nonexistent/a/b")).toEqual({ projects: { "/nonexistent/a/b": { trust_level: "untrusted" }, "/nonexistent/a": { trust_level: "untrusted" }, "/nonexistent": { trust_level: "untrusted" }, "/": { trust_level: "untrusted" } } });
  const real = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "li-trust-")));
  const link = `${real}-link`;
  fs.mkdirSync(path.join(real, "repo"));
  fs.symlinkSync(real, link);
  try {
    const keys = Object.keys(untrustedProjects(path.join(link, "repo")).projects);
    expect(keys).toEqual(expect.arrayContaining([path.join(link, "repo"), link, path.join(real, "repo"), real, "/"]));
  } finally {
    fs.rmSync(link);
    fs.rmSync(real, { recursive: true });
  }
});
