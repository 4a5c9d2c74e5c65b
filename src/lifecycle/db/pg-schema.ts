/*
 * The store's schema on PostgreSQL: the same tables, columns and counters as SQLite's at
 * PG_BASE_VERSION (src/lifecycle/schema.ts), created in one step, since no PostgreSQL store
 * predates it. A later schema version adds a step to both backends.
 *
 * Differences, each for a reason:
 * - Text compares byte-wise (COLLATE "C"), as SQLite's does: ids and ISO times sort the same
 *   under every database locale.
 * - Generated keys are identity columns; counters are kept by PL/pgSQL triggers.
 * - li_epoch reads an ISO time as seconds. It is declared immutable, which is true of the UTC
 *   times li writes, so that the duration index can use it.
 */

import { BUDGETS_STEP } from "../budgets/schema-step.js";
import { APPROVALS_STEP, RULE_MATCHES_STEP } from "../approvals/schema-step.js";
import { GATEWAY_CALLS_STEP } from "../gateway-calls/schema-step.js";
import { BUDGET_HOSTS_STEP } from "../budgets/host-claims-step.js";

export const PG_BASE_VERSION = 7;

/** Steps after the base, by the version each upgrades from (the same numbers as SQLite's). */
export const PG_MIGRATIONS: Readonly<Record<number, string>> = {
  // 8: the host a record was made on, and the index of each host's unfinished runs (see SQLite's step 8).
  7: `ALTER TABLE entities ADD COLUMN host TEXT COLLATE "C";
      CREATE INDEX entities_host_active ON entities(host, status) WHERE status IN ('preparing', 'queued', 'running');`,
  // 9: placement, leases and kill requests (see SQLite's step 9).
  8: `ALTER TABLE entities ADD COLUMN place TEXT COLLATE "C";
      CREATE INDEX entities_placed ON entities(queue_seq) WHERE place IS NOT NULL AND status = 'queued';
      CREATE TABLE run_inputs (entity_id TEXT COLLATE "C" PRIMARY KEY REFERENCES entities(id) ON DELETE CASCADE, prompt TEXT NOT NULL);
      CREATE TABLE hosts (
        name TEXT COLLATE "C" PRIMARY KEY,
        epoch BIGINT NOT NULL,
        boot_id TEXT,
        pid BIGINT,
        proc_start BIGINT,
        max_parallel INTEGER NOT NULL,
        lease_seconds DOUBLE PRECISION NOT NULL,
        started_at TEXT COLLATE "C" NOT NULL,
        heartbeat_at TEXT COLLATE "C" NOT NULL,
        lease_until TEXT COLLATE "C" NOT NULL,
        stopped_at TEXT COLLATE "C"
      );
      CREATE TABLE kill_requests (
        id TEXT COLLATE "C" PRIMARY KEY,
        entity_id TEXT COLLATE "C" NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
        host TEXT COLLATE "C" NOT NULL,
        requested_by TEXT COLLATE "C" NOT NULL,
        requested_at TEXT COLLATE "C" NOT NULL,
        status TEXT COLLATE "C" NOT NULL CHECK (status IN ('pending', 'done', 'failed')),
        result TEXT,
        done_at TEXT COLLATE "C"
      );
      CREATE INDEX kill_requests_pending ON kill_requests(host, requested_at) WHERE status = 'pending';`,
  // 10: console chunks (see SQLite's step 10). Only this backend writes them.
  9: `CREATE TABLE console_chunks (
        entity_id TEXT COLLATE "C" NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
        pos BIGINT NOT NULL,
        data BYTEA NOT NULL,
        last BOOLEAN NOT NULL DEFAULT false,
        PRIMARY KEY (entity_id, pos)
      );`,
  // 11: isolated runs' changes and the apply ledger (see SQLite's step 11).
  10: `CREATE TABLE changes (
        entity_id TEXT COLLATE "C" PRIMARY KEY REFERENCES entities(id) ON DELETE CASCADE,
        host TEXT COLLATE "C",
        repo TEXT NOT NULL,
        base_sha TEXT NOT NULL,
        head_sha TEXT NOT NULL,
        branch TEXT NOT NULL,
        files TEXT NOT NULL,
        insertions BIGINT NOT NULL,
        deletions BIGINT NOT NULL,
        patch_bytes BIGINT NOT NULL,
        truncated INTEGER NOT NULL,
        patch BYTEA NOT NULL,
        source_changed TEXT,
        captured_at TEXT COLLATE "C" NOT NULL
      );
      CREATE TABLE applies (
        id TEXT COLLATE "C" PRIMARY KEY,
        entity_id TEXT COLLATE "C" NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
        host TEXT COLLATE "C" NOT NULL,
        repo TEXT NOT NULL,
        onto_sha TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('applying', 'applied', 'abandoned')),
        pid BIGINT,
        commit_sha TEXT,
        started_at TEXT COLLATE "C" NOT NULL,
        applied_at TEXT COLLATE "C"
      );
      CREATE INDEX applies_target ON applies(entity_id, host, repo);
      ALTER TABLE changes ADD COLUMN check_result TEXT;
      CREATE TABLE change_pairs (
        session_id TEXT COLLATE "C" NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
        a TEXT COLLATE "C" NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
        b TEXT COLLATE "C" NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
        both_files TEXT NOT NULL,
        conflict INTEGER NOT NULL,
        conflicts TEXT NOT NULL,
        computed_at TEXT COLLATE "C" NOT NULL,
        PRIMARY KEY (a, b)
      );
      CREATE INDEX change_pairs_session ON change_pairs(session_id);`,
  // 12: budgets (see SQLite's step 12).
  11: BUDGETS_STEP.postgres,
  // 13: approvals (see SQLite's step 13).
  12: APPROVALS_STEP.postgres,
  // 14: the model gateway's calls (see SQLite's step 14).
  13: GATEWAY_CALLS_STEP.postgres,
  // 15: approvals' rule_matches (see SQLite's step 15).
  14: RULE_MATCHES_STEP.postgres,
  // 16: budget_hosts (see SQLite's step 16).
  15: BUDGET_HOSTS_STEP.postgres,
};

const T = 'TEXT COLLATE "C"';

export const PG_BASE_SCHEMA = `
CREATE FUNCTION li_epoch(t text) RETURNS double precision IMMUTABLE STRICT PARALLEL SAFE LANGUAGE sql
  AS $$ SELECT extract(epoch FROM t::timestamptz) $$;
CREATE TABLE meta (key ${T} PRIMARY KEY, value ${T} NOT NULL);
CREATE TABLE entities (
  id ${T} PRIMARY KEY,
  kind ${T} NOT NULL CHECK (kind IN ('invocation','session','play')),
  parent_id ${T} REFERENCES entities(id),
  label ${T},
  status ${T} NOT NULL,
  outcome ${T},
  reason_code ${T},
  version INTEGER NOT NULL DEFAULT 1,
  spec ${T} NOT NULL DEFAULT '{}',
  created_at ${T} NOT NULL,
  updated_at ${T} NOT NULL,
  ended_at ${T},
  pid BIGINT,
  pgid BIGINT,
  proc_start BIGINT,
  started_at ${T},
  exit_code INTEGER,
  current_phase ${T},
  run_dir ${T},
  result_text ${T},
  usage ${T},
  provider_session_id ${T},
  num_turns INTEGER,
  queue ${T},
  queue_seq BIGINT
);
CREATE INDEX entities_parent ON entities(parent_id);
CREATE INDEX entities_status ON entities(status, created_at, id);
CREATE INDEX entities_recent ON entities(created_at, id);
CREATE INDEX entities_top_recent ON entities(parent_id, created_at, id);
CREATE INDEX entities_label ON entities(label, created_at, id);
CREATE INDEX entities_queue ON entities(queue_seq) WHERE queue_seq IS NOT NULL;
CREATE INDEX entities_failures ON entities(ended_at, id) WHERE outcome IN ('failed', 'indeterminate');
CREATE INDEX entities_duration ON entities(kind, (li_epoch(ended_at) - li_epoch(started_at)))
  WHERE started_at IS NOT NULL AND ended_at IS NOT NULL;
CREATE INDEX entities_usage ON entities(created_at) WHERE usage IS NOT NULL AND kind = 'invocation';
CREATE TABLE events (
  id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  entity_id ${T} NOT NULL REFERENCES entities(id),
  from_status ${T},
  to_status ${T} NOT NULL,
  reason_code ${T},
  source ${T} NOT NULL,
  at ${T} NOT NULL,
  detail ${T}
);
CREATE INDEX events_entity ON events(entity_id);
CREATE TABLE deliveries (
  id ${T} PRIMARY KEY,
  event_id BIGINT NOT NULL REFERENCES events(id),
  entity_id ${T} NOT NULL REFERENCES entities(id),
  handler ${T} NOT NULL,
  target ${T} NOT NULL,
  payload ${T} NOT NULL,
  status ${T} NOT NULL CHECK (status IN ('pending','delivering','delivered','failed','acked')),
  attempts INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL,
  next_attempt_at ${T} NOT NULL,
  lease_until ${T},
  last_error ${T},
  created_at ${T} NOT NULL,
  updated_at ${T} NOT NULL
);
CREATE INDEX deliveries_due ON deliveries(status, next_attempt_at);
CREATE INDEX deliveries_recent ON deliveries(created_at, id);
CREATE TABLE schedules (
  id ${T} PRIMARY KEY,
  name ${T} NOT NULL UNIQUE,
  cron ${T} NOT NULL,
  timezone ${T} NOT NULL,
  enabled INTEGER NOT NULL CHECK (enabled IN (0, 1)),
  model ${T} NOT NULL,
  prompt ${T} NOT NULL,
  label ${T},
  spec ${T} NOT NULL,
  next_run_at ${T},
  last_fired_at ${T},
  created_at ${T} NOT NULL,
  updated_at ${T} NOT NULL,
  action ${T},
  every_seconds INTEGER,
  max_runs INTEGER,
  fired_count INTEGER NOT NULL DEFAULT 0,
  on_failure ${T} NOT NULL DEFAULT 'continue',
  disabled_reason ${T}
);
CREATE INDEX schedules_due ON schedules(enabled, next_run_at);
CREATE TABLE schedule_runs (
  seq BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  id ${T} NOT NULL UNIQUE,
  schedule_id ${T} NOT NULL REFERENCES schedules(id) ON DELETE CASCADE,
  entity_id ${T} REFERENCES entities(id),
  trigger ${T} NOT NULL CHECK (trigger IN ('tick', 'manual')),
  due_at ${T},
  fired_at ${T} NOT NULL,
  error ${T}
);
CREATE INDEX schedule_runs_schedule ON schedule_runs(schedule_id, seq);
CREATE TABLE teams (id ${T} PRIMARY KEY, name ${T} NOT NULL UNIQUE, created_at ${T} NOT NULL);
CREATE TABLE team_members (
  team_id ${T} NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
  name ${T} NOT NULL,
  read_seq BIGINT NOT NULL DEFAULT 0,
  read_at ${T},
  joined_at ${T} NOT NULL,
  PRIMARY KEY (team_id, name)
);
CREATE TABLE messages (
  seq BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  id ${T} NOT NULL UNIQUE,
  team_id ${T} NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
  sender ${T} NOT NULL,
  recipient ${T},
  body ${T} NOT NULL,
  created_at ${T} NOT NULL
);
CREATE INDEX messages_team ON messages(team_id, seq);

CREATE TABLE entity_counts (
  kind ${T} NOT NULL, status ${T} NOT NULL, outcome ${T} NOT NULL, n BIGINT NOT NULL,
  PRIMARY KEY (kind, status, outcome)
);
CREATE TABLE duration_counts (kind ${T} PRIMARY KEY, n BIGINT NOT NULL);

CREATE FUNCTION li_spanned(started text, ended text) RETURNS boolean IMMUTABLE LANGUAGE sql
  AS $$ SELECT started IS NOT NULL AND ended IS NOT NULL AND li_epoch(ended) - li_epoch(started) >= 0 $$;

CREATE FUNCTION li_count_entities() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    IF TG_OP = 'DELETE' OR OLD.kind IS DISTINCT FROM NEW.kind OR OLD.status IS DISTINCT FROM NEW.status OR OLD.outcome IS DISTINCT FROM NEW.outcome THEN
      UPDATE entity_counts SET n = n - 1 WHERE kind = OLD.kind AND status = OLD.status AND outcome = coalesce(OLD.outcome, 'none');
    END IF;
    IF TG_OP = 'DELETE' OR OLD.kind IS DISTINCT FROM NEW.kind OR OLD.started_at IS DISTINCT FROM NEW.started_at OR OLD.ended_at IS DISTINCT FROM NEW.ended_at THEN
      IF li_spanned(OLD.started_at, OLD.ended_at) THEN UPDATE duration_counts SET n = n - 1 WHERE kind = OLD.kind; END IF;
    END IF;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    IF TG_OP = 'INSERT' OR OLD.kind IS DISTINCT FROM NEW.kind OR OLD.status IS DISTINCT FROM NEW.status OR OLD.outcome IS DISTINCT FROM NEW.outcome THEN
      INSERT INTO entity_counts VALUES (NEW.kind, NEW.status, coalesce(NEW.outcome, 'none'), 1)
        ON CONFLICT (kind, status, outcome) DO UPDATE SET n = entity_counts.n + 1;
    END IF;
    IF TG_OP = 'INSERT' OR OLD.kind IS DISTINCT FROM NEW.kind OR OLD.started_at IS DISTINCT FROM NEW.started_at OR OLD.ended_at IS DISTINCT FROM NEW.ended_at THEN
      IF li_spanned(NEW.started_at, NEW.ended_at) THEN
        INSERT INTO duration_counts VALUES (NEW.kind, 1) ON CONFLICT (kind) DO UPDATE SET n = duration_counts.n + 1;
      END IF;
    END IF;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER entity_counts AFTER INSERT OR UPDATE OR DELETE ON entities FOR EACH ROW EXECUTE FUNCTION li_count_entities();
`;
