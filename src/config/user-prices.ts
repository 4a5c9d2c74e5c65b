import fs from "node:fs";
import type { PriceEntry } from "./price-settings.js";
import { parseSettings, userSettingsPath } from "./settings.js";

/** The user's price entries now (read afresh, as the queue limits are); none when the file is absent. */
export function userPrices(): PriceEntry[] {
  const file = userSettingsPath();
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch {
    return [];
  }
  return parseSettings(bytes, file, "user").prices ?? [];
}
