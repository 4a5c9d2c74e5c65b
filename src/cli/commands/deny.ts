import type { Command } from "../commander.js";
import type { CliContext } from "../adapter.js";
import { registerAnswer } from "../approval-answer.js";

export function register(root: Command, ctx: CliContext): void {
  registerAnswer(root, ctx, "deny");
}
