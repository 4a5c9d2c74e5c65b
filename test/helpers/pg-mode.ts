// The postgres project: every test home's store is a database in the project's cluster (tempHome).
process.env.LI_TEST_STORE = "postgres";
