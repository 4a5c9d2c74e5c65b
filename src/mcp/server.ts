import { pathToFileURL } from "node:url";
import { installedBuildId } from "../build-id.js";
import { entryScript } from "../entrypoints.js";
import { importModule } from "../packages.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, JSONRPCMessageSchema, ListToolsRequestSchema, RootsListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { VERSION } from "../version.js";
import type { Policy } from "../config/policy.js";
import { AuditLog } from "./audit.js";
import { clip } from "./echo.js";
import { ClientRoots } from "./roots.js";
import { Slots } from "./slots.js";
import { BoundedStdioTransport } from "./stdio-transport.js";
import { INSTRUCTIONS, REQUEST_TOOL } from "./tool.js";
import type { Surface } from "./surface.js";
import type { SurfaceModule } from "./surface-module.js";

interface Loaded {
  key: string | null;
  module: SurfaceModule;
  surface: Surface;
}

/**
 * The surface of the li the server runs, loaded from that build's own bundle. When the build on
 * disk changes (an upgrade, a rebuild), the next call loads the new one, so a schema and its
 * fingerprint always describe the CLI that will execute the op: an old fingerprint is then
 * stale, and the rejection carries the new schema.
 */
export class BuildTracker {
  private current?: Promise<Loaded>;

  async get(): Promise<Loaded> {
    const key = installedBuildId();
    const current = this.current ? await this.current.catch(() => undefined) : undefined;
    if (current && current.key === key) return current;
    this.current = this.load(key);
    return this.current;
  }

  private async load(key: string | null): Promise<Loaded> {
    // A distinct URL per build makes the module loader evaluate the new bundle afresh.
    const url = `${pathToFileURL(entryScript("mcp-surface")).href}?build=${encodeURIComponent(key ?? "unknown")}`;
    const module = await importModule<SurfaceModule>(url);
    return { key, module, surface: await module.createSurface() };
  }
}

export interface ServeOptions {
  /** Which verbs this server offers (flags and settings, merged by the command). */
  policy?: Policy;
  /** Where every op leaves one audit line. */
  auditFile?: string;
}

/** `li mcp`: one tool, `request`, over stdio, served by the SDK's low-level Server. */
export async function serveStdio(options: ServeOptions = {}): Promise<void> {
  // The registry, ajv and the CLI's parsers load on the first call, so connecting stays cheap.
  const builds = new BuildTracker();
  // Shared by every call and every build: at most MAX_CONCURRENT_OPS li children at once.
  const slots = new Slots();
  const audit = options.auditFile ? new AuditLog(options.auditFile) : undefined;
  const server = new Server({ name: "li", version: VERSION }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  const roots = new ClientRoots(server);
  server.setNotificationHandler(RootsListChangedNotificationSchema, async () => roots.changed());
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [REQUEST_TOOL as any] }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const { module, surface } = await builds.get();
    if (req.params.name !== REQUEST_TOOL.name) return module.refuse(`there is one tool, "request"; ${JSON.stringify(clip(req.params.name))} does not exist`) as any;
    // A cancelled request (notifications/cancelled) ends its op's li at once; the work it observed is untouched.
    const token = req.params._meta?.progressToken;
    // Progress must only grow: a later op restarting its clock continues from the last value.
    let last = 0;
    const progress =
      token === undefined
        ? undefined
        : (p: { progress: number; total?: number; message: string }) => {
            last = Math.max(last + 0.001, p.progress);
            void extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: last, ...(p.total ? { total: Math.max(p.total, last) } : {}), message: p.message } } as any).catch(() => {});
          };
    return (await module.handleRequest(surface, req.params.arguments, {
      signal: extra.signal,
      slots,
      fileRoots: () => roots.get(),
      progress,
      policy: options.policy,
      audit,
      client: server.getClientVersion() ?? null,
    })) as any;
  });
  await server.connect(new BoundedStdioTransport((v) => JSONRPCMessageSchema.safeParse(v).success));
  await new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
}
