import type * as ChildProcess from "node:child_process";
import type * as Crypto from "node:crypto";
import type * as Tty from "node:tty";
import type * as V8 from "node:v8";
import { createRequire } from "node:module";
import type * as AjvModule from "ajv";
import type * as Tsyringe from "tsyringe";
import type * as TreeSitter from "web-tree-sitter";
import type * as Yaml from "yaml";

/*
 * Packages and heavy built-ins only some paths need, loaded through require on first use:
 * never on a command's start-up path, and never hoisted to the top of the bundled CLI.
 * (node:crypto alone is about 6 ms of a read command's start, which never needs it; node:child_process
 * brings node:net and node:dgram with it.)
 */
const load = createRequire(import.meta.url);

export const yaml = (): typeof Yaml => load("yaml");
export const ajv = (): typeof AjvModule => load("ajv");
export const tsyringe = (): typeof Tsyringe => load("tsyringe");
export const crypto = (): typeof Crypto => load("node:crypto");
export const childProcess = (): typeof ChildProcess => load("node:child_process");
export const v8 = (): typeof V8 => load("node:v8");
/** The shell parser approval rules use (lifecycle/approvals/shell-parse.ts), and its bash grammar's file. */
export const treeSitter = (): typeof TreeSitter => load("web-tree-sitter");
export const shellGrammarPath = (): string => load.resolve("tree-sitter-bash/tree-sitter-bash.wasm");
/** node:tty brings node:net and node:stream with it; only a human view asks it anything. */
export const tty = (): typeof Tty => load("node:tty");

declare const __liImport: ((specifier: string) => Promise<any>) | undefined;

/**
 * import() of a package or a file URL. The CLI bundle runs from V8's code cache (bin/li.js), and
 * on Node 20 a cached script has no import() of its own, so there the launcher lends its own as
 * `__liImport`; everywhere else (the other bundles, tests from source) this is plain import().
 */
export const importModule = <T = any>(specifier: string): Promise<T> => (typeof __liImport === "function" ? __liImport(specifier) : import(specifier));

/** Hex SHA-256 of `data`. */
export const sha256Hex = (data: string | Buffer): string => crypto().createHash("sha256").update(data).digest("hex");
