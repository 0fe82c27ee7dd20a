import { z } from "@hono/zod-openapi";
import { ServiceUnavailableError } from "../errors.ts";
import { runTick } from "../scheduler/tick.ts";
import { fleetFault } from "../config/bundled.ts";
import { isoOrNull } from "../shared/iso-time.ts";
import { createApi, withRole } from "./factory.ts";
import { DateTimeString, errorResponse } from "./schemas.ts";

const Tick = z
	.object({
		scheduled_time: DateTimeString.openapi({ description: "The minute ticked: now, to the minute, as the cron trigger would have it" }),
		outcome: z.enum(["ok", "partial"]).openapi({ description: "partial: some agents or shards could not be reached (their names in GET /v1/status's error)" }),
		agents_called: z.number().int(),
		claimed: z.number().int(),
		skipped: z.number().int(),
		shards_failed: z.number().int(),
		deferred: z.number().int().openapi({ description: "Due agents the shards left to their follow-up alarms (past what one invocation may call), still to be called when the tick ended" }),
		oldest_deferred_minute: DateTimeString.nullable().openapi({ description: "The oldest minute those are owed: this one, or earlier when a shard is behind; null when none was left" }),
		shards_behind: z.number().int().openapi({ description: "Shards behind their ticks (GET /v1/status's warnings say so)" }),
	})
	.openapi("Tick");

export type TickShape = z.infer<typeof Tick>;

/**
 * One tick of the scheduler now (Hermes' `cron tick`), on the cron trigger's own path, for an operator
 * who will not wait for the next minute (after a deploy, or to check a schedule). Claims are
 * idempotent, so this and the cron's tick of the same minute claim each slot once between them.
 */
const noShardAnswered = () => new ServiceUnavailableError("the tick failed: no shard of the scheduler answered");

export const tickApi = createApi().openapi(
	withRole("admin", {
		method: "post",
		operationId: "tick",
		path: "/",
		summary: "Run one scheduler tick now: every due occurrence is claimed once, whichever tick gets there first",
		responses: {
			200: { description: "The tick's summary, as the heartbeat records it", content: { "application/json": { schema: Tick } } },
			500: errorResponse("config_invalid: fleet.yaml is invalid (edited under `npm start`), so no shard could tick; details.issues name each fault"),
			503: errorResponse("No shard of the scheduler answered (code unavailable); the heartbeat and the scheduler incident say so"),
		},
	}),
	async (c) => {
		const now = Date.now();
		const minute = Math.floor(now / 60_000) * 60_000;
		let summary: Awaited<ReturnType<typeof runTick>>;
		try {
			summary = await runTick(c.env, minute, now, { trigger: "api", by: c.var.principal.name });
		} catch {
			// runTick has logged each shard's error and filed the scheduler incident already.
			throw noShardAnswered();
		}
		// An invalid fleet.yaml stopped the tick before any shard (runTick filed it and returns): answered
		// as every route reading the file answers (500 config_invalid).
		if (summary.outcome === "failed") throw fleetFault() ?? noShardAnswered();
		return c.json(
			{
				scheduled_time: new Date(summary.scheduledTime).toISOString(),
				outcome: summary.outcome,
				agents_called: summary.agentsCalled,
				claimed: summary.claimed,
				skipped: summary.skipped,
				shards_failed: summary.shardsFailed,
				deferred: summary.deferred,
				oldest_deferred_minute: isoOrNull(summary.oldestDeferred),
				shards_behind: summary.shardsBehind,
			},
			200,
		);
	},
);
