// What the Worker's bundle takes for the bare specifier "zod" (wrangler.toml's `alias`): zod's own
// index (node_modules/zod/index.js) over the namespace in ./external.ts, zod's classic API less its
// translated error messages (`z.locales`, `z.core.locales`).
//
// Why: @hono/zod-openapi hands zod's whole namespace to extendZodWithOpenApi(z) as a value, so
// esbuild must build that object with every export on it, and `export * as locales` there is 60-odd
// languages' messages (38 KiB of the bundle gzipped) that drover never uses: it says its own
// words for a missing field (../zod-messages.ts) and zod's English ones otherwise, which zod sets up
// by itself (classic/schemas.js imports locales/en.js). Tests, the CLI and the emulator import the
// real package; test/unit/zod-alias.test.ts checks that this one has every export of it but those.
import * as z from "./external.ts";

export * from "./external.ts";
export { z, z as default };
