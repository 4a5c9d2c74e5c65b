/*
 * The postgres project (jest.config.js) runs the ON_BOTH_STORES suites a second time with every
 * home on PostgreSQL. A test whose subject never reaches the store (bad input refused before any
 * record, the MCP fence, settings and environment rules, pure logic) proves nothing more there:
 * `oneStore` runs it in the sqlite project only, and the postgres project reports it skipped under
 * its own name, so the count says where it went.
 */
export const oneStore: typeof test = process.env.LI_TEST_STORE === "postgres" ? test.skip : test;
