// Tests run from TypeScript through swc; black-box tests use the built bin/li.js (npm test builds first).
export default {
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
  testMatch: ["<rootDir>/test/**/*.test.ts"],
  testTimeout: 60000,
  // Most suites wait on child processes rather than compute: two workers keep both cores busy
  // (jest's default on two cores is one), which keeps npm test well under ten minutes.
  maxWorkers: 2,
};
