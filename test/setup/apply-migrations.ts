import { applyD1Migrations, env, type D1Migration } from "cloudflare:test";

// TEST_MIGRATIONS is a test-only binding (vitest.config.mts), so it is not part of the Worker's Env.
const { TEST_MIGRATIONS } = env as unknown as { TEST_MIGRATIONS: D1Migration[] };

// Setup files run outside per-file isolated storage and may run more than once;
// applyD1Migrations skips what is already applied.
await applyD1Migrations(env.DB, TEST_MIGRATIONS);
