import { dbOf, type HasSql } from "./db/handle.js";

/*
 * Where a PostgreSQL store can be reached on this host, as its server says: the address and port
 * of li's own connection, and the directories of its Unix sockets (readable by a superuser or a
 * member of pg_read_all_settings; else unknown). A workspace sandbox keeps its agent from every
 * one of them (src/runtime/sandbox/store-reach.ts). SQLite has none: its file is under $LI_HOME.
 */

export interface StoreEndpoints {
  addr: string | null;
  port: number | null;
  socketDirs: string[];
}

export async function storeEndpoints(store: HasSql): Promise<StoreEndpoints> {
  const db = dbOf(store);
  if (db.dialect !== "postgres") return { addr: null, port: null, socketDirs: [] };
  const row = await db.get<{ addr: string | null; port: string }>("SELECT host(inet_server_addr()) AS addr, current_setting('port') AS port");
  let socketDirs: string[] = [];
  try {
    const dirs = await db.get<{ dirs: string | null }>("SELECT current_setting('unix_socket_directories', true) AS dirs");
    socketDirs = (dirs?.dirs ?? "").split(",").map((d) => d.trim().replace(/^"(.*)"$/, "$1")).filter((d) => d.startsWith("/"));
  } catch {}
  return { addr: row?.addr ?? null, port: row ? Number(row.port) : null, socketDirs };
}
