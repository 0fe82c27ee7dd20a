import { createRoute, z } from "@hono/zod-openapi";
import { loadFleet } from "../config/bundled.ts";
import { ConfigError } from "../errors.ts";
import { errorFields, log } from "../log.ts";
import { d1Health, missingD1Migrations } from "../store/d1-schema.ts";
import { heartbeatHealth, readHeartbeat } from "../store/heartbeat.ts";
import { numberVar, varIssues } from "../config/vars.ts";
import { apiTokensHealth } from "./auth/secret.ts";
import { createApi } from "./factory.ts";
import { D1Report, SchedulerHealth } from "./status.ts";

const Health = z
	.object({
		status: z.enum(["ok", "degraded"]),
		version: z.string(),
		fleet: z.object({
			ok: z.boolean(),
			agents: z.number().int(),
			issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
		}),
		scheduler: SchedulerHealth.nullable().openapi({ description: "null when the heartbeat cannot be read (D1 unavailable)" }),
		d1: D1Report
			.openapi({
				description:
					"D1's schema. Not ok (a 503): migrations this release needs are missing (a Worker deployed by a bare `wrangler deploy` or a CI or Git build, which do not apply them, where `npm run deploy` does): `missing` lists them and `fix` says how to apply them; or, with neither, D1 could not be read. Ok with `missing` and `fix`: only migrations that add an index are missing, which nothing needs to work",
			}),
		variables: z
			.object({ ok: z.boolean(), issues: z.array(z.object({ path: z.string(), message: z.string() })).optional() })
			.openapi({
				description:
					"The Worker's vars: a numeric one (RETENTION_DAYS, HEARTBEAT_STALE_SECONDS, SUBREQUEST_LIMIT) that is not a whole number in range is listed, and its default used meanwhile; a PUBLIC_URL that is not an http(s) origin is listed, and deliveries and alerts carry no dashboard link meanwhile",
			}),
		api_tokens: z
			.object({ ok: z.boolean(), issues: z.array(z.object({ path: z.string(), message: z.string() })).optional() })
			.openapi({
				description:
					"The API_TOKENS secret, its entries named by place only (API_TOKENS[1]), never by name or token. ok: it loads, and issues lists the entries it leaves out (a token holding a space or a character beyond ASCII), the others working; not ok (a 503): it is unset or malformed, every authenticated route answers 500 config_invalid, and issues say why",
			}),
	})
	.openapi("Health");

/** The answer's shape, for the CLI (a type-only import). */
export type HealthShape = z.infer<typeof Health>;

/**
 * Liveness needs no token: load balancers and uptime checks call it bare. It answers 503 when the
 * fleet or API_TOKENS cannot load, D1 lacks a migration the code needs (not one that only adds an
 * index) or the scheduler has stalled, so a plain HTTP check catches each. An agent the scheduler
 * cannot reach (a partial tick) is that agent's incident, not the Worker's health: no 503.
 */
export const healthApi = createApi().openapi(
	createRoute({
		method: "get",
		operationId: "getHealth",
		path: "/healthz",
		summary: "Liveness, fleet configuration and scheduler heartbeat age (no auth)",
		security: [],
		responses: {
			200: { description: "drover is up and ticking", content: { "application/json": { schema: Health } } },
			503: { description: "drover is up but its configuration (fleet.yaml, API_TOKENS) is invalid, D1 lacks a migration this release needs, or its scheduler has stalled (no good tick, ok or partial, within HEARTBEAT_STALE_SECONDS); a partial last tick (some agent could not be reached) is reported in `scheduler.outcome`, not a 503", content: { "application/json": { schema: Health } } },
		},
	}),
	async (c) => {
		let fleet: z.infer<typeof Health>["fleet"];
		try {
			fleet = { ok: true, agents: loadFleet().agents.length };
		} catch (err) {
			if (!(err instanceof ConfigError)) throw err;
			fleet = { ok: false, agents: 0, issues: err.issues };
		}
		// Read together: each is one small D1 query, and /healthz is polled.
		const [hb, missing] = await Promise.all([
			readHeartbeat(c.env.DB).catch((err: unknown) => void log.error("healthz.heartbeat_unreadable", errorFields(err))),
			missingD1Migrations(c.env.DB).catch((err: unknown) => void log.error("healthz.d1_unreadable", errorFields(err))),
		]);
		const scheduler = hb === undefined ? null : heartbeatHealth(hb, Date.now(), numberVar(c.env, "HEARTBEAT_STALE_SECONDS"));
		const d1: z.infer<typeof Health>["d1"] = d1Health(missing);
		// Reported, not degrading: each falls back to its default, and drover runs on.
		const issues = varIssues(c.env);
		const variables = issues.length === 0 ? { ok: true } : { ok: false, issues };
		const apiTokens = await apiTokensHealth(c.env.API_TOKENS);
		const ok = fleet.ok && scheduler !== null && !scheduler.stalled && d1.ok && apiTokens.ok;
		if (!ok) {
			const down = [!fleet.ok && "fleet", (scheduler === null || scheduler.stalled) && "scheduler", !d1.ok && "d1", !apiTokens.ok && "api_tokens"].filter(Boolean);
			c.set("errorCode", "degraded");
			c.set("errorMessage", `not ok: ${down.join(", ")}`);
			// Polled by load balancers, a 503 here is a line a poll for as long as it lasts: a warning where
			// its one cause is an invalid fleet.yaml, which every tick says at error (tick.fleet_invalid).
			// Otherwise an error: a scheduler no tick reaches (the cron not firing) has no other line, nor
			// has an API_TOKENS no request has read yet.
			if (down.length === 1 && down[0] === "fleet") c.set("failureLevel", "warn");
		}
		return c.json({ status: ok ? ("ok" as const) : ("degraded" as const), version: c.env.DROVER_VERSION, fleet, scheduler, d1, variables, api_tokens: apiTokens }, ok ? 200 : 503);
	},
);
