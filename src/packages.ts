import type * as Crypto from "node:crypto";
import { createRequire } from "node:module";
import type * as AjvModule from "ajv";
import type * as Tsyringe from "tsyringe";
import type * as Yaml from "yaml";

/*
 * Packages and heavy built-ins only some paths need, loaded through require on first use:
 * never on a command's start-up path, and never hoisted to the top of the bundled CLI.
 * (node:crypto alone is about 6 ms of a read command's start, which never needs it.)
 */
const load = createRequire(import.meta.url);

export const yaml = (): typeof Yaml => load("yaml");
export const ajv = (): typeof AjvModule => load("ajv");
export const tsyringe = (): typeof Tsyringe => load("tsyringe");
export const crypto = (): typeof Crypto => load("node:crypto");

/** Hex SHA-256 of `data`. */
export const sha256Hex = (data: string | Buffer): string => crypto().createHash("sha256").update(data).digest("hex");
