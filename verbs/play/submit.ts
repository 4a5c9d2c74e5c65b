import { LiError } from "../../src/errors.js";
import { playRunCommandFor } from "../../src/cli/builders/play-run.js";
import { verb, type CommandContext, type Verb } from "../../src/mcp/verb.js";
import { SPAWNED_OR_PLAN, SUBMIT } from "../schemas.js";

const VERB = "play.submit";

/**
 * Two-stage schema (ADR-0066 D3): the base schema has the playbook name, the prompt and the
 * flow options; naming a playbook injects its declared args exactly as `li play` does. Execution
 * resolves again. The op must carry the `playbook_fingerprint` its help returned, beside
 * schema_fingerprint, so the CLI always reports `playbook_changed`: a template or model edit
 * leaves the schema (and its fingerprint) unchanged, and nothing else would catch it.
 */
@verb({
  id: VERB,
  ...SUBMIT,
  effects: ["spawns", "reads_files", "writes_records"],
  cliPath: ["play", "run"],
  artifactFingerprint: { key: "playbook_fingerprint", flag: "--playbook-fingerprint" },
  helpKeys: ["playbook"],
  summary: "run a playbook",
  note: 'Playbooks declare their own arguments: call help={"verb":"play.submit","playbook":NAME} for that playbook\'s schema, schema_fingerprint and playbook_fingerprint.',
  result: { allOf: [SPAWNED_OR_PLAN, { required: ["playbook_fingerprint", "playbook_changed"] }] },
})
export class PlaySubmit implements Verb {
  async command(args: Record<string, unknown>): Promise<CommandContext> {
    const name = args.playbook;
    if (typeof name !== "string") throw Object.assign(new Error('play.submit needs "playbook": the playbook name'), { params: ["playbook"] });
    const { command, fingerprint } = this.resolve(name);
    return { command, extra: { playbook_fingerprint: fingerprint, help_target: { verb: VERB, playbook: name } } };
  }

  async help(target: Record<string, unknown>): Promise<CommandContext> {
    if (typeof target.playbook !== "string") throw new Error('help for play.submit takes {"verb": "play.submit", "playbook": NAME}');
    const { command, fingerprint } = this.resolve(target.playbook);
    return { command, extra: { playbook_fingerprint: fingerprint } };
  }

  private resolve(name: string) {
    try {
      return playRunCommandFor(name, process.cwd());
    } catch (err) {
      if (err instanceof LiError) throw Object.assign(new Error(err.message), { params: ["playbook"], detail: err.detail });
      throw err;
    }
  }
}
