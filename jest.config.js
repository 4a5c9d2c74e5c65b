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
};
