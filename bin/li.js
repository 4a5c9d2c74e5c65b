#!/usr/bin/env node
import { main } from "../dist/bundle/li.js";
await main(process.argv.slice(2));
