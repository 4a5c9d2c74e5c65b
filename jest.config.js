// Tests run from TypeScript through swc; black-box tests use the built bin/li.js (npm test builds first).
import { pgBinDir } from "./test/helpers/pg-cluster.mjs";

const project = {
  testEnvironment: "node",
  transform: {
    "^.+\\.ts$": [
      "@swc/jest",
      {
        jsc: {
          parser: { syntax: "typescript", decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true },
          target: "es2022",
        },
        module: { type: "es6" },
      },
    ],
  },
  extensionsToTreatAsEsm: [".ts"],
  moduleNameMapper: { "^(\\.{1,2}/.*)\\.js$": "$1" },
  setupFiles: ["reflect-metadata"],
};

// The lifecycle, wait, kill, queue and host suites run a second time against a PostgreSQL store
// (LI_STORE), one database per test home (a copy of one li has migrated), in the cluster of the
// jest worker (test/helpers/pg-worker.mjs): each worker starts one the first time a suite needs it.
// Each home reaches it through the worker's PgBouncer in transaction mode, LISTEN on the direct URL
// (issue 49; tempHome in test/helpers/li.ts), so a pooler runs the store, wait, kill, host, budgets
// and approvals suites at no extra cost.
const ON_BOTH_STORES = ["lifecycle-transition", "lifecycle-concurrency", "wait-d6", "wait-unit", "wait-people", "wait-human", "kill-tree", "kill-race", "kill-self", "kill-interrupted", "queue", "host", "store-private", "studio-store", "studio-budgets", "job-diff-apply", "budgets", "budget-alerts", "approvals", "studio-approvals", "gateway", "budgets-unreadable"];
// The same rule as every suite that starts a cluster (pgBinDir), so the project never runs without one.
const havePostgres = !!pgBinDir();
if (!havePostgres && !process.env.LI_TEST_REQUIRE_POSTGRES)
  console.warn("li: skipping the PostgreSQL store's run of the lifecycle suites: apt-get install postgresql (or set LI_TEST_PG_BIN)");

// The stress tier (npm run test:stress sets LI_TEST_STRESS=1): only these suites, whose repeated
// proofs then run at their full count (test/helpers/stress.ts); npm test runs every suite, those
// proofs at a reduced count. test/stress-tier.test.ts checks this list.
export const STRESS_SUITES = ["host-daemons", "lifecycle-concurrency", "kill-race", "queue", "budgets", "budgets-hosts", "budgets-allowance", "store-postgres-restart", "approvals-table", "agent-clis-claude-approvals", "kill-grace-lease"];
const stress = process.env.LI_TEST_STRESS === "1";
const suites = (names) => names.filter((n) => !stress || STRESS_SUITES.includes(n)).map((name) => `<rootDir>/test/${name}.test.ts`);

export default {
  testTimeout: 60000,
  // The slowest suites start first (test/helpers/sequencer.mjs, from the committed
  // test/suite-times.json where jest's cache has no times, as in a clean clone), so that neither
  // worker is left finishing a long suite alone at the end.
  testSequencer: "<rootDir>/test/helpers/sequencer.mjs",
  // The run's folder where each worker records its PostgreSQL cluster, and their stop at the end.
  globalSetup: "<rootDir>/test/helpers/pg-global.mjs",
  globalTeardown: "<rootDir>/test/helpers/pg-global-teardown.mjs",
  // Most suites wait on child processes (real agent CLIs, daemons, sandboxes) rather than compute:
  // on two cores, three workers keep both busy where two left them idle (jest's default is one).
  // The 8 slowest sqlite suites, back to back under the same load, in either order: 245 -> 162 s
  // and 138 -> 109 s of wall time from 2 workers to 3 (CONTRIBUTING, "Tests and benchmarks").
  maxWorkers: 3,
  projects: [
    {
      ...project,
      displayName: "sqlite",
      testMatch: stress ? suites(STRESS_SUITES) : ["<rootDir>/test/**/*.test.ts"],
      // A test never touches the repository it runs from: a run that adds li/* branches to it fails.
      globalSetup: "<rootDir>/test/helpers/repo-guard-setup.mjs",
      globalTeardown: "<rootDir>/test/helpers/repo-guard-teardown.mjs",
    },
    ...(havePostgres || process.env.LI_TEST_REQUIRE_POSTGRES
      ? [
          {
            ...project,
            displayName: "postgres",
            testMatch: suites(ON_BOTH_STORES),
            setupFiles: ["reflect-metadata", "<rootDir>/test/helpers/pg-mode.ts"],
          },
        ]
      : []),
  ],
};
