import { createRoute, z } from "@hono/zod-openapi";
import { loadFleet } from "../config/bundled.ts";
import { ConfigError } from "../errors.ts";
import { errorFields, log } from "../log.ts";
import { heartbeatHealth, readHeartbeat } from "../store/heartbeat.ts";
import { numberVar, varIssues } from "../config/vars.ts";
import { apiTokensHealth } from "./auth/secret.ts";
import { createApi } from "./factory.ts";
import { SchedulerHealth } from "./status.ts";

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
		variables: z
			.object({ ok: z.boolean(), issues: z.array(z.object({ path: z.string(), message: z.string() })).optional() })
			.openapi({
				description:
					"The Worker's vars: a numeric one (RETENTION_DAYS, HEARTBEAT_STALE_SECONDS, SUBREQUEST_LIMIT) that is not a whole number in range is listed, and its default used meanwhile; a PUBLIC_URL that is not an http(s) origin is listed, and deliveries carry no dashboard link meanwhile",
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
 * fleet or API_TOKENS cannot load or the scheduler has stalled, so a plain HTTP check catches each.
 */
export const healthApi = createApi().openapi(
	createRoute({
		method: "get",
		path: "/healthz",
		summary: "Liveness, fleet configuration and scheduler heartbeat age (no auth)",
		responses: {
			200: { description: "drover is up and ticking", content: { "application/json": { schema: Health } } },
			503: { description: "drover is up but its configuration (fleet.yaml, API_TOKENS) is invalid or its scheduler has stalled", content: { "application/json": { schema: Health } } },
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
		let scheduler: z.infer<typeof SchedulerHealth> | null = null;
		try {
			scheduler = heartbeatHealth(await readHeartbeat(c.env.DB), Date.now(), numberVar(c.env, "HEARTBEAT_STALE_SECONDS"));
		} catch (err) {
			log.error("healthz.heartbeat_unreadable", errorFields(err));
		}
		// Reported, not degrading: each falls back to its default, and drover runs on.
		const issues = varIssues(c.env);
		const variables = issues.length === 0 ? { ok: true } : { ok: false, issues };
		const apiTokens = await apiTokensHealth(c.env.API_TOKENS);
		const ok = fleet.ok && scheduler !== null && !scheduler.stalled && apiTokens.ok;
		return c.json({ status: ok ? ("ok" as const) : ("degraded" as const), version: c.env.DROVER_VERSION, fleet, scheduler, variables, api_tokens: apiTokens }, ok ? 200 : 503);
	},
);
