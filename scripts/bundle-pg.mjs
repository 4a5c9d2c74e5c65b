// node-postgres as one bundle run from V8's code cache (dist/bundle/pg.cjs), for a read on a
// PostgreSQL store (scripts/bundle.mjs): its thirty-odd files loaded one by one were most of what
// such a read costs beyond SQLite's. What a read on a trusted connection never uses loads on first
// use: node:crypto (only password authentication hashes) and node:dns.

/** Exact rewrites of node-postgres's sources; one that no longer matches fails the build, not a run. */
const LAZY = [
  [
    /[\\/]pg[\\/]lib[\\/]crypto[\\/]utils\.js$/,
    [
      ["const nodeCrypto = require('crypto')", "const __liCrypto = () => require('crypto')\nconst nodeCrypto = new Proxy({}, { get: (_, k) => __liCrypto()[k] })"],
      ["const webCrypto = nodeCrypto.webcrypto || globalThis.crypto", "const __liBound = (of) => new Proxy({}, { get: (_, k) => { const o = of(); const v = o[k]; return typeof v === 'function' ? v.bind(o) : v } })\nconst __liWeb = () => __liCrypto().webcrypto || globalThis.crypto\nconst webCrypto = __liBound(__liWeb)"],
      ["const subtleCrypto = webCrypto.subtle", "const subtleCrypto = __liBound(() => __liWeb().subtle)"],
    ],
  ],
  [/[\\/]pg[\\/]lib[\\/]connection-parameters\.js$/, [["const dns = require('dns')", "const dns = { lookup: (...a) => require('dns').lookup(...a) }"]]],
];

export const lazyPgParts = {
  name: "pg-lazy-parts",
  setup(b) {
    for (const [filter, rewrites] of LAZY)
      b.onLoad({ filter }, async (args) => {
        let text = await (await import("node:fs")).promises.readFile(args.path, "utf8");
        for (const [from, to] of rewrites) {
          if (!text.includes(from)) throw new Error(`${args.path}: expected \`${from}\` (see scripts/bundle-pg.mjs)`);
          text = text.replace(from, to);
        }
        return { contents: text, loader: "js" };
      });
  },
};

/** The entry of dist/bundle/pg.cjs, "li-pg": the package's exports. */
export const pgEntry = (root) => ({
  name: "pg-entry",
  setup(b) {
    b.onResolve({ filter: /^li-pg$/ }, () => ({ path: "pg", namespace: "li-pg" }));
    b.onLoad({ filter: /.*/, namespace: "li-pg" }, () => ({ contents: 'module.exports = require("pg");\n', loader: "js", resolveDir: root }));
  },
});

/** Its build options: every part of node-postgres inlined but those for other runtimes. */
export const pgBundleOptions = (root, common) => ({ external: ["pg-native", "pg-cloudflare"], plugins: [...common.plugins, lazyPgParts, pgEntry(root)] });
