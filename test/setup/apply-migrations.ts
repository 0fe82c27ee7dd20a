import { applyD1Migrations, env } from "cloudflare:test";

// Setup files run outside per-file isolated storage and may run more than once;
// applyD1Migrations skips what is already applied.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
