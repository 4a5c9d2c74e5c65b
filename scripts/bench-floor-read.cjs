// The floor under a read (npm run bench:startup): the least `li --machine job list` could cost on
// this machine with li's own SQLite driver, loaded as li loads it (its JavaScript bundled, its
// addon by path). One query of the store's runs, one JSON line out: no parser, no views, no
// checks. scripts/bench-startup.mjs bundles it; __LI_ADDON__ is the addon's path.
"use strict";
const Database = require("better-sqlite3");
const addon = { exports: {} };
process.dlopen(addon, __LI_ADDON__);
const db = new Database(require("node:path").join(process.env.LI_HOME, "state.db"), { readonly: true, fileMustExist: true, nativeBinding: addon.exports });
const jobs = db.prepare("SELECT * FROM entities ORDER BY rowid DESC LIMIT 50").all();
db.close();
process.stdout.write(JSON.stringify({ contract: "li.result", version: 1, ok: true, data: { jobs } }) + "\n");
