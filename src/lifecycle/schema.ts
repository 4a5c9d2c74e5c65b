import { LiError } from "../errors.js";
import { PG_MIGRATIONS } from "./db/pg-schema.js";
import { BUDGETS_STEP } from "./budgets/schema-step.js";
import { APPROVALS_STEP, RULE_MATCHES_STEP } from "./approvals/schema-step.js";
import { GATEWAY_CALLS_STEP } from "./gateway-calls/schema-step.js";
import { BUDGET_HOSTS_STEP } from "./budgets/host-claims-step.js";
import type { Dialect } from "./db/types.js";
/**
 * Forward-only migrations. Index i upgrades user_version i to i+1.
 * Never edit a shipped step: add a new one.
 */
export const MIGRATIONS: readonly string[] = [
  // 1: entities and their audit trail.
  `CREATE TABLE entities (
     id TEXT PRIMARY KEY,
     kind TEXT NOT NULL CHECK (kind IN ('invocation','session','play')),
     parent_id TEXT REFERENCES entities(id),
     label TEXT,
     status TEXT NOT NULL,
     outcome TEXT,
     reason_code TEXT,
     version INTEGER NOT NULL DEFAULT 1,
     spec TEXT NOT NULL DEFAULT '{}',
     created_at TEXT NOT NULL,
     updated_at TEXT NOT NULL,
     ended_at TEXT
   );
   CREATE INDEX entities_parent ON entities(parent_id);
   CREATE INDEX entities_status ON entities(status);
   CREATE TABLE events (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     entity_id TEXT NOT NULL REFERENCES entities(id),
     from_status TEXT,
     to_status TEXT NOT NULL,
     reason_code TEXT,
     source TEXT NOT NULL,
     at TEXT NOT NULL,
     detail TEXT
   );
   CREATE INDEX events_entity ON events(entity_id);`,
  // 2: the recorded spawn phase (pid, group, /proc start time) and run bookkeeping.
  `ALTER TABLE entities ADD COLUMN pid INTEGER;
   ALTER TABLE entities ADD COLUMN pgid INTEGER;
   ALTER TABLE entities ADD COLUMN proc_start INTEGER;
   ALTER TABLE entities ADD COLUMN started_at TEXT;
   ALTER TABLE entities ADD COLUMN exit_code INTEGER;
   ALTER TABLE entities ADD COLUMN current_phase TEXT;
   ALTER TABLE entities ADD COLUMN run_dir TEXT;`,
  // 3: the terminal-notify outbox.
  `CREATE TABLE deliveries (
     id TEXT PRIMARY KEY,
     event_id INTEGER NOT NULL REFERENCES events(id),
     entity_id TEXT NOT NULL REFERENCES entities(id),
     handler TEXT NOT NULL,
     target TEXT NOT NULL,
     payload TEXT NOT NULL,
     status TEXT NOT NULL CHECK (status IN ('pending','delivering','delivered','failed','acked')),
     attempts INTEGER NOT NULL DEFAULT 0,
     max_attempts INTEGER NOT NULL,
     next_attempt_at TEXT NOT NULL,
     lease_until TEXT,
     last_error TEXT,
     created_at TEXT NOT NULL,
     updated_at TEXT NOT NULL
   );
   CREATE INDEX deliveries_due ON deliveries(status, next_attempt_at);`,
  // 4: schedules with their fired runs, and teams with their members and messages.
  // Ordering keys for messages and runs are integer sequences, not ids: ids minted by two
  // processes in the same millisecond need not sort in insertion order, and a read cursor must.
  `CREATE TABLE schedules (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL UNIQUE,
     cron TEXT NOT NULL,
     timezone TEXT NOT NULL,
     enabled INTEGER NOT NULL CHECK (enabled IN (0, 1)),
     model TEXT NOT NULL,
     prompt TEXT NOT NULL,
     label TEXT,
     spec TEXT NOT NULL,
     next_run_at TEXT,
     last_fired_at TEXT,
     created_at TEXT NOT NULL,
     updated_at TEXT NOT NULL
   );
   CREATE INDEX schedules_due ON schedules(enabled, next_run_at);
   CREATE TABLE schedule_runs (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     id TEXT NOT NULL UNIQUE,
     schedule_id TEXT NOT NULL REFERENCES schedules(id) ON DELETE CASCADE,
     entity_id TEXT REFERENCES entities(id),
     trigger TEXT NOT NULL CHECK (trigger IN ('tick', 'manual')),
     due_at TEXT,
     fired_at TEXT NOT NULL,
     error TEXT
   );
   CREATE INDEX schedule_runs_schedule ON schedule_runs(schedule_id, seq);
   CREATE TABLE teams (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL UNIQUE,
     created_at TEXT NOT NULL
   );
   CREATE TABLE team_members (
     team_id TEXT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
     name TEXT NOT NULL,
     read_seq INTEGER NOT NULL DEFAULT 0,
     read_at TEXT,
     joined_at TEXT NOT NULL,
     PRIMARY KEY (team_id, name)
   );
   CREATE TABLE messages (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     id TEXT NOT NULL UNIQUE,
     team_id TEXT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
     sender TEXT NOT NULL,
     recipient TEXT,
     body TEXT NOT NULL,
     created_at TEXT NOT NULL
   );
   CREATE INDEX messages_team ON messages(team_id, seq);`,
  // 5: lists are newest first by creation time (id breaks ties), and page by that key: these
  // indexes let a page read only its own rows, for every record or for the top-level ones.
  // The status index grows the same key, so a --status page is a seek too.
  `CREATE INDEX entities_recent ON entities(created_at, id);
   DROP INDEX entities_status;
   CREATE INDEX entities_status ON entities(status, created_at, id);
   CREATE INDEX entities_top_recent ON entities(parent_id, created_at, id);
   CREATE INDEX entities_label ON entities(label, created_at, id);
   CREATE INDEX deliveries_recent ON deliveries(created_at, id);`,
  // 6: what a provider reported about a run: its final answer, token usage (JSON) and cost, the
  // provider's own session id (what --resume continues) and its turn count.
  `ALTER TABLE entities ADD COLUMN result_text TEXT;
   ALTER TABLE entities ADD COLUMN usage TEXT;
   ALTER TABLE entities ADD COLUMN provider_session_id TEXT;
   ALTER TABLE entities ADD COLUMN num_turns INTEGER;`,
  // 7: the run queue; indexes and maintained counters (the list indexes are 5's) so that lists and aggregates cost what
  // they show, not the whole history; schedules of any spawn kind with limits; the tick heartbeat.
  `ALTER TABLE entities ADD COLUMN queue TEXT;
   ALTER TABLE entities ADD COLUMN queue_seq INTEGER;
   CREATE INDEX entities_queue ON entities(queue_seq) WHERE queue_seq IS NOT NULL;
   CREATE INDEX entities_failures ON entities(ended_at, id) WHERE outcome IN ('failed', 'indeterminate');
   CREATE INDEX entities_duration ON entities(kind, (unixepoch(ended_at, 'subsec') - unixepoch(started_at, 'subsec')))
     WHERE started_at IS NOT NULL AND ended_at IS NOT NULL;
   CREATE INDEX entities_grouping ON entities(kind, status, outcome, json_extract(spec, '$.model'));
   -- li stats' usage totals read only the runs that reported usage, not the whole history.
   CREATE INDEX entities_usage ON entities(created_at) WHERE usage IS NOT NULL AND kind = 'invocation';
   -- Counted by triggers, so every writer (the transition, an insert, a clean) keeps them exact
   -- in its own transaction.
   CREATE TABLE entity_counts (
     kind TEXT NOT NULL,
     status TEXT NOT NULL,
     outcome TEXT NOT NULL,
     n INTEGER NOT NULL,
     PRIMARY KEY (kind, status, outcome)
   ) WITHOUT ROWID;
   INSERT INTO entity_counts SELECT kind, status, coalesce(outcome, 'none'), count(*) FROM entities GROUP BY 1, 2, 3;
   CREATE TRIGGER entity_counts_insert AFTER INSERT ON entities BEGIN
     INSERT INTO entity_counts VALUES (NEW.kind, NEW.status, coalesce(NEW.outcome, 'none'), 1) ON CONFLICT DO UPDATE SET n = n + 1;
   END;
   CREATE TRIGGER entity_counts_update AFTER UPDATE OF kind, status, outcome ON entities
     WHEN OLD.kind IS NOT NEW.kind OR OLD.status IS NOT NEW.status OR OLD.outcome IS NOT NEW.outcome BEGIN
     UPDATE entity_counts SET n = n - 1 WHERE kind = OLD.kind AND status = OLD.status AND outcome = coalesce(OLD.outcome, 'none');
     INSERT INTO entity_counts VALUES (NEW.kind, NEW.status, coalesce(NEW.outcome, 'none'), 1) ON CONFLICT DO UPDATE SET n = n + 1;
   END;
   CREATE TRIGGER entity_counts_delete AFTER DELETE ON entities BEGIN
     UPDATE entity_counts SET n = n - 1 WHERE kind = OLD.kind AND status = OLD.status AND outcome = coalesce(OLD.outcome, 'none');
   END;
   -- How many records of each kind have a duration (started, ended, not negative): the ranks
   -- of the percentiles read from entities_duration.
   CREATE TABLE duration_counts (kind TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
   INSERT INTO duration_counts SELECT kind, count(*) FROM entities WHERE started_at IS NOT NULL AND ended_at IS NOT NULL
     AND unixepoch(ended_at, 'subsec') - unixepoch(started_at, 'subsec') >= 0 GROUP BY kind;
   CREATE TRIGGER duration_counts_insert AFTER INSERT ON entities WHEN (NEW.started_at IS NOT NULL AND NEW.ended_at IS NOT NULL AND unixepoch(NEW.ended_at, 'subsec') - unixepoch(NEW.started_at, 'subsec') >= 0) BEGIN
     INSERT INTO duration_counts VALUES (NEW.kind, 1) ON CONFLICT DO UPDATE SET n = n + 1;
   END;
   CREATE TRIGGER duration_counts_update AFTER UPDATE OF kind, started_at, ended_at ON entities BEGIN
     UPDATE duration_counts SET n = n - 1 WHERE kind = OLD.kind AND (OLD.started_at IS NOT NULL AND OLD.ended_at IS NOT NULL AND unixepoch(OLD.ended_at, 'subsec') - unixepoch(OLD.started_at, 'subsec') >= 0);
     INSERT INTO duration_counts SELECT NEW.kind, 1 WHERE (NEW.started_at IS NOT NULL AND NEW.ended_at IS NOT NULL AND unixepoch(NEW.ended_at, 'subsec') - unixepoch(NEW.started_at, 'subsec') >= 0) ON CONFLICT DO UPDATE SET n = n + 1;
   END;
   CREATE TRIGGER duration_counts_delete AFTER DELETE ON entities WHEN (OLD.started_at IS NOT NULL AND OLD.ended_at IS NOT NULL AND unixepoch(OLD.ended_at, 'subsec') - unixepoch(OLD.started_at, 'subsec') >= 0) BEGIN
     UPDATE duration_counts SET n = n - 1 WHERE kind = OLD.kind;
   END;
   ALTER TABLE schedules ADD COLUMN action TEXT;
   ALTER TABLE schedules ADD COLUMN every_seconds INTEGER;
   ALTER TABLE schedules ADD COLUMN max_runs INTEGER;
   ALTER TABLE schedules ADD COLUMN fired_count INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE schedules ADD COLUMN on_failure TEXT NOT NULL DEFAULT 'continue';
   ALTER TABLE schedules ADD COLUMN disabled_reason TEXT;
   UPDATE schedules SET fired_count = (SELECT count(*) FROM schedule_runs r WHERE r.schedule_id = schedules.id AND r.trigger = 'tick');
   CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;`,
  // 8: the host a record was made on (LI_HOST, else the hostname); null for records made before
  // hosts were recorded. One store may serve several hosts, and each host's daemon and
  // `li host list` count that host's unfinished runs: the partial index holds only those, so the
  // count costs what is running, not the history. Its predicate is spelled exactly as the
  // queries spell it (lifecycle/hosts.ts), which is what SQLite needs to use a partial index.
  `ALTER TABLE entities ADD COLUMN host TEXT;
   CREATE INDEX entities_host_active ON entities(host, status) WHERE status IN ('preparing', 'queued', 'running');`,
  // 9: several hosts (issue 19). A run placed with --host waits, unowned (host null), for a host
  // daemon to claim it: `place` is 'any' or the one host that may. Its prompt waits in the store
  // (run_inputs), since the submitter's run directory is on the submitter's disk. Each daemon
  // holds a lease in `hosts`, its times from the database's clock; `epoch` grows with every
  // registration so a daemon that lost its lease cannot act as if it had not. A kill of another
  // host's run is a request that host's daemon carries out.
  `ALTER TABLE entities ADD COLUMN place TEXT;
   CREATE INDEX entities_placed ON entities(queue_seq) WHERE place IS NOT NULL AND status = 'queued';
   CREATE TABLE run_inputs (entity_id TEXT PRIMARY KEY REFERENCES entities(id) ON DELETE CASCADE, prompt TEXT NOT NULL);
   CREATE TABLE hosts (
     name TEXT PRIMARY KEY,
     epoch INTEGER NOT NULL,
     boot_id TEXT,
     pid INTEGER,
     proc_start INTEGER,
     max_parallel INTEGER NOT NULL,
     lease_seconds REAL NOT NULL,
     started_at TEXT NOT NULL,
     heartbeat_at TEXT NOT NULL,
     lease_until TEXT NOT NULL,
     stopped_at TEXT
   );
   CREATE TABLE kill_requests (
     id TEXT PRIMARY KEY,
     entity_id TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
     host TEXT NOT NULL,
     requested_by TEXT NOT NULL,
     requested_at TEXT NOT NULL,
     status TEXT NOT NULL CHECK (status IN ('pending', 'done', 'failed')),
     result TEXT,
     done_at TEXT
   );
   CREATE INDEX kill_requests_pending ON kill_requests(host, requested_at) WHERE status = 'pending';`,
  // 10: a run's console as other hosts read it (issue 22). On a PostgreSQL store the worker ships
  // its console.log here in chunks as it is written, each chunk at its byte offset (pos), and
  // keeps only the newest bytes of a run (lifecycle/consoles.ts); "last" marks the chunk that
  // ends it. A reader sees what was dropped as a gap between offsets. On SQLite every reader is
  // on the host that ran the run, so nothing is ever written here: the table exists only so that
  // the two backends have the same schema at each version.
  `CREATE TABLE console_chunks (
     entity_id TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
     pos INTEGER NOT NULL,
     data BLOB NOT NULL,
     last INTEGER NOT NULL DEFAULT 0,
     PRIMARY KEY (entity_id, pos)
   ) WITHOUT ROWID;`,
  // 11: isolated runs (issue 29). An isolated run's change, captured when it ends, on the host
  // whose worktree held it: its fields and its binary patch (bounded; `truncated` when only the
  // branch on that host holds all of it). `applies` is the ledger that makes an apply happen once
  // per repository: a row is written 'applying' before git touches the target and 'applied'
  // after, so an apply cut short is found and reconciled by the next one.
  `CREATE TABLE changes (
     entity_id TEXT PRIMARY KEY REFERENCES entities(id) ON DELETE CASCADE,
     host TEXT,
     repo TEXT NOT NULL,
     base_sha TEXT NOT NULL,
     head_sha TEXT NOT NULL,
     branch TEXT NOT NULL,
     files TEXT NOT NULL,
     insertions INTEGER NOT NULL,
     deletions INTEGER NOT NULL,
     patch_bytes INTEGER NOT NULL,
     truncated INTEGER NOT NULL,
     patch BLOB NOT NULL,
     source_changed TEXT,
     captured_at TEXT NOT NULL
   );
   CREATE TABLE applies (
     id TEXT PRIMARY KEY,
     entity_id TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
     host TEXT NOT NULL,
     repo TEXT NOT NULL,
     onto_sha TEXT NOT NULL,
     status TEXT NOT NULL CHECK (status IN ('applying', 'applied', 'abandoned')),
     pid INTEGER,
     commit_sha TEXT,
     started_at TEXT NOT NULL,
     applied_at TEXT
   );
   CREATE INDEX applies_target ON applies(entity_id, host, repo);
   -- Best of N (issue 30): a run's check (--check-cmd, run in its worktree after the capture) as
   -- JSON, and the predicted merge of each pair of a fan-out's changes, computed on the host that
   -- holds their branches and read from any host.
   ALTER TABLE changes ADD COLUMN check_result TEXT;
   CREATE TABLE change_pairs (
     session_id TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
     a TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
     b TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
     both_files TEXT NOT NULL,
     conflict INTEGER NOT NULL,
     conflicts TEXT NOT NULL,
     computed_at TEXT NOT NULL,
     PRIMARY KEY (a, b)
   );
   CREATE INDEX change_pairs_session ON change_pairs(session_id);`,
  // 12: budgets (issue 31); see budgets/schema-step.ts.
  BUDGETS_STEP.sqlite,
  // 13: approvals (issue 39); see approvals/schema-step.ts.
  APPROVALS_STEP.sqlite,
  // 14: the model gateway's calls (issue 47); see gateway-calls/schema-step.ts.
  GATEWAY_CALLS_STEP.sqlite,
  // 15: which rule answered an approval request, command by command (issue 46); see approvals/schema-step.ts.
  RULE_MATCHES_STEP.sqlite,
  // 16: each host's part in a budget's per-call check (issue 47); see budgets/host-claims-step.ts.
  BUDGET_HOSTS_STEP.sqlite,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * The step that upgrades version `v` to `v + 1` on a backend. A PostgreSQL store starts at its
 * base version (db/pg-schema.ts), so it has steps only from there on.
 */
export function migrationStep(dialect: Dialect, v: number): string {
  const step = dialect === "postgres" ? PG_MIGRATIONS[v] : MIGRATIONS[v];
  if (step === undefined) throw new LiError("internal", `no ${dialect} migration from schema version ${v}`, { dialect, version: v });
  return step;
}
