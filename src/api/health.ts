import { createRoute, z } from "@hono/zod-openapi";
import { loadFleet } from "../config/bundled.ts";
import { ConfigError } from "../errors.ts";
import { createApi } from "./factory.ts";

const Health = z
	.object({
		status: z.enum(["ok", "degraded"]),
		version: z.string(),
		fleet: z.object({
			ok: z.boolean(),
			agents: z.number().int(),
			issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
		}),
	})
	.openapi("Health");

/** Liveness needs no token: load balancers and uptime checks call it bare. */
export const healthApi = createApi().openapi(
	createRoute({
		method: "get",
		path: "/healthz",
		summary: "Liveness and configuration health (no auth)",
		responses: {
			200: { description: "drover is up", content: { "application/json": { schema: Health } } },
			503: { description: "drover is up but cannot schedule: its configuration is invalid", content: { "application/json": { schema: Health } } },
		},
	}),
	(c) => {
		const version = c.env.DROVER_VERSION;
		try {
			const fleet = loadFleet();
			return c.json({ status: "ok" as const, version, fleet: { ok: true, agents: fleet.agents.length } }, 200);
		} catch (err) {
			if (!(err instanceof ConfigError)) throw err;
			return c.json({ status: "degraded" as const, version, fleet: { ok: false, agents: 0, issues: err.issues } }, 503);
		}
	},
);
