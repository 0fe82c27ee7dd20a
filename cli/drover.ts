#!/usr/bin/env node
// The `drover` executable (package.json "bin"). Node 22 runs this TypeScript directly by stripping
// the types, so everything under cli/ is erasable syntax only. Commands live in cli/commands/.
import { run } from "./program.ts";

process.exitCode = await run(process.argv);
