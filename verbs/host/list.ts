import { verb, type Verb } from "../../src/mcp/verb.js";
import { nullable } from "../schemas.js";

const count = { type: "integer", minimum: 0 };

/** One host as li host list prints it: its lease by the store's clock, its daemon, its runs. */
const HOST = {
  type: "object",
  required: ["host", "lease", "heartbeat_age_seconds", "epoch", "max_parallel", "pid", "started_at", "stopped_at", "preparing", "queued", "running", "placed"],
  properties: {
    host: { type: "string" },
    lease: { enum: ["alive", "expired", "none"] },
    // Null, like the daemon's fields below, for a host with no registration (lease none).
    heartbeat_age_seconds: nullable("number"),
    epoch: nullable("integer"),
    max_parallel: nullable("integer"),
    pid: nullable("integer"),
    started_at: nullable("string"),
    heartbeat_at: nullable("string"),
    lease_until: nullable("string"),
    stopped_at: nullable("string"),
    preparing: count,
    queued: count,
    running: count,
    placed: count,
  },
};

@verb({
  id: "host.list",
  effects: [],
  requiresFingerprint: false,
  cliPath: ["host", "list"],
  summary: "hosts and leases",
  result: { type: "object", required: ["hosts", "placed_any", "count"], properties: { hosts: { type: "array", items: HOST }, placed_any: count, count } },
})
export class HostList implements Verb {}
