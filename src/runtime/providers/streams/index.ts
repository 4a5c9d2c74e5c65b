import type { StreamFormat } from "../types.js";
import { claudeParser } from "./claude.js";
import { codexParser } from "./codex.js";
import { geminiParser } from "./gemini.js";
import { liParser } from "./li.js";
import { acpParser } from "./acp.js";
import type { ParserOptions, StreamParser } from "./parser.js";

/** The reader of a structured stream; "text" has none (the console is the stream itself). */
export function parserFor(format: Exclude<StreamFormat, "text">, options: ParserOptions = {}): StreamParser {
  switch (format) {
    case "claude":
      return claudeParser(options);
    case "codex":
      return codexParser(options);
    case "gemini":
      return geminiParser();
    case "li":
      return liParser();
    case "acp":
      return acpParser();
  }
}
