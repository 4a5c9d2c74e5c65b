import { createRequire } from "node:module";
import type * as AjvModule from "ajv";
import type * as Tsyringe from "tsyringe";
import type * as Yaml from "yaml";

/*
 * Packages only some paths need, loaded through require on first use: never on a command's
 * start-up path, and never hoisted to the top of the bundled CLI.
 */
const load = createRequire(import.meta.url);

export const yaml = (): typeof Yaml => load("yaml");
export const ajv = (): typeof AjvModule => load("ajv");
export const tsyringe = (): typeof Tsyringe => load("tsyringe");
