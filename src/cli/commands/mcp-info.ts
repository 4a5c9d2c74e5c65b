import { BUILD_ID } from "../../build-id.js";
import { liHome } from "../../lifecycle/paths.js";
import { CALL_BUDGET_SECONDS, MAX_OPS, MIN_OP_START_SECONDS } from "../../mcp/limits.js";
import { maxOutputBytes, MAX_STDERR_BYTES } from "../../mcp/exec.js";
import { MAX_CONCURRENT_OPS } from "../../mcp/slots.js";
import { MAX_MESSAGE_BYTES } from "../../mcp/stdio-transport.js";
import { MAX_VALUE_DEPTH } from "../../mcp/values.js";
import { PROVIDERS } from "../../runtime/providers/index.js";
import { VERSION } from "../../version.js";

/** What `server.info` reports: the li that ran it, and the limits the surface holds callers to. */
export function serverInfo() {
  return {
    version: VERSION,
    build_id: BUILD_ID,
    li_home: liHome(),
    providers: PROVIDERS.map((p) => ({ name: p.name, ...p.availability({}) })),
    limits: {
      max_ops_per_call: MAX_OPS,
      call_budget_seconds: CALL_BUDGET_SECONDS,
      min_op_start_seconds: MIN_OP_START_SECONDS,
      max_concurrent_ops: MAX_CONCURRENT_OPS,
      max_message_bytes: MAX_MESSAGE_BYTES,
      max_output_bytes: maxOutputBytes(),
      max_stderr_bytes: MAX_STDERR_BYTES,
      max_value_depth: MAX_VALUE_DEPTH,
    },
  };
}
