import { z } from "@hono/zod-openapi";
import { loadFleet } from "../config/bundled.ts";
import { numberVar } from "../config/vars.ts";
import { d1StorageWarning } from "../config/storage.ts";
import { backlogWarning, BEHIND_MINUTES } from "../scheduler/backlog.ts";
import { countRegisteredAgents } from "../store/agent-registry.ts";
import { cachedD1Health, D1_CHECK_TTL_MS } from "../store/d1-schema.ts";
import { countJobsByStatus } from "../store/job-index.ts";
import { OPEN_COUNTED, openIncidents, unpagedIncidents } from "../store/incidents.ts";
import { UNPAGED_AFTER_MS, unpagedWarning } from "../incidents/alert.ts";
import { heartbeatHealth, readHeartbeatAndSize } from "../store/heartbeat.ts";
import { errorFields, log } from "../log.ts";
import { agentsHoldingSecrets, heldSecretsWarning, PAGE_ROWS } from "../security/definition-secrets-warning.ts";
import { createApi, withRole } from "./factory.ts";
import { DateTimeString } from "./schemas.ts";

export const SchedulerHealth = z
	.object({
		last_tick_at: DateTimeString.nullable(),
		age_seconds: z.number().int().nullable(),
		stalled: z.boolean().openapi({
			description:
				"No good tick (ok or partial) within HEARTBEAT_STALE_SECONDS, however many failed ones; or none ever: the cron trigger is not reaching drover, or its ticks fail entirely. A partial tick is the scheduler working with some agent it could not reach (that agent's own incident, under the agent \"scheduler\"): not stalled",
		}),
		outcome: z.enum(["ok", "partial", "failed"]).nullable().openapi({
			description: "The last tick's: ok; partial, some shard or agent could not be reached (`error` says which), the others called; failed, no shard answered",
		}),
		last_ok_at: DateTimeString.nullable().openapi({ description: "When the last good tick (ok or partial: not failed) began; what `stalled` is decided by" }),
	})
	.openapi("SchedulerHealth");

/** D1's schema, as /healthz and GET /v1/status report it. */
export const D1Report = z.object({
	ok: z.boolean(),
	missing: z
		.array(z.string())
		.optional()
		.openapi({
			description:
				"The D1 migrations (migrations/) this release has that D1 has no record of applying, in order. With ok true, each only adds an index (D1_INDEX_ONLY_MIGRATIONS in src/store/d1-schema.ts): reads scan where they would seek, nothing fails",
		}),
	fix: z.string().optional().openapi({ description: "The command that applies them" }),
	recorded: z
		.literal(false)
		.optional()
		.openapi({ description: "Present when D1 keeps no record of applied migrations (no d1_migrations table: a schema made by hand, or another migrations_table): the schema is not checked, and not counted against ok" }),
});

/**
 * What each warning is of: `scheduler_behind` (a shard behind its ticks), `d1_storage` (D1 nearly full), `incidents_unpaged`,
 * `definition_secret` (an agent's definition holds a Worker secret's value).
 */
const WarningKind = z.enum(["scheduler_behind", "d1_storage", "incidents_unpaged", "definition_secret"]).openapi("WarningKind");

const Status = z
	.object({
		scheduler: SchedulerHealth.extend({
			agents_called: z.number().int().nullable(),
			claimed: z.number().int().nullable(),
			skipped: z.number().int().nullable(),
			error: z.string().nullable().openapi({ description: "Which agents or shards the last tick could not reach; why is in the Worker's logs" }),
			deferred: z.number().int().nullable().openapi({
				description:
					"Due agents the shards had left to their follow-up alarms when the last tick ended (past what one invocation may call), each called within seconds, or after earlier minutes when a shard is behind; null before the first tick that counted them",
			}),
			oldest_deferred_minute: DateTimeString.nullable().openapi({
				description: "The oldest minute those agents are owed (its slots are claimed, late, when they are called): the last tick's own, or earlier when a shard is behind; null when none was left",
			}),
			shards_ok: z.number().int().nullable().openapi({ description: "Scheduler shards that answered the last tick (of the 16); null before the first tick" }),
			shards_failed: z.number().int().nullable().openapi({
				description: "Scheduler shards that did not answer the last tick (partial when some did, failed when none): that minute their agents were not called, `error` names the shards and the logs say why (`tick.shard_failed`); null before the first tick",
			}),
			shards_behind: z.number().int().nullable().openapi({
				description: `Shards whose oldest pending minute was ${BEHIND_MINUTES} or more minutes before their newest as the last tick ended (said in warnings), until they call all but their newest through`,
			}),
		}),
		warnings: z.array(z.string()).openapi({ description: `What an operator should look at: a scheduler shard behind its ticks, D1 at 8 of the 10 GB a database may hold, open incidents not paged 3 minutes after they opened (\`alerts: …\`: ALERT_WEBHOOK_URL unset or not an http(s) URL, or the webhook refusing their alerts), agents whose definition holds the value of one of the Worker's secrets (each agent and field named, never the value; reads show [REDACTED] in its place; fleet.yaml's agents looked at once by each of the Worker's isolates, the API's ${PAGE_ROWS} a request where the last left off, so a registry of n agents every n / ${PAGE_ROWS} requests)` }),
		warning_kinds: z.array(WarningKind).openapi({ description: "Each warning's kind, in the warnings' order: what a client acts on, where the warning's text is for people and may change" }),
		d1_bytes: z.number().int().nullable().openapi({ description: "D1's size in bytes, as its last answer here reported it (null where it reports none): Cloudflare allows 10 GB a database, and a warning is given from 8 GB" }),
		d1: D1Report.openapi({
			description: `D1's schema as /healthz reports it (not ok: migrations this release needs are missing, \`missing\` naming them and \`fix\` how to apply them; or D1 could not be read), checked at most once every ${D1_CHECK_TTL_MS / 1000} s by each of the Worker's isolates: an applied fix shows within that`,
		}),
		incidents: z
			.object({
				open: z.number().int().openapi({ description: `Open incidents (detected or alerted), counted up to ${OPEN_COUNTED}` }),
				more: z.boolean().openapi({ description: `More than ${OPEN_COUNTED} are open (GET /v1/incidents lists them)` }),
			})
			.nullable()
			.openapi({ description: "Incidents still open, paged or not; null when D1 could not answer the count (the Worker's status.incidents_unreadable line says why)" }),
		jobs: z.record(z.string(), z.number().int()).openapi({ description: "Indexed jobs by status" }),
		agents: z.object({ file: z.number().int(), api: z.number().int() }),
	})
	.openapi("Status");

/** The answers' shapes, for the CLI (a type-only import: nothing of src/ loads in it at run time). */
export type SchedulerHealthShape = z.infer<typeof SchedulerHealth>;
export type StatusShape = z.infer<typeof Status>;

let incidentsUnreadableSaidAt = Number.NEGATIVE_INFINITY;
let definitionsUnreadableSaidAt = Number.NEGATIVE_INFINITY;

export const statusApi = createApi().openapi(
	withRole("read", {
		method: "get",
		operationId: "getStatus",
		path: "/",
		summary: "Scheduler heartbeat, jobs by status, agent counts and D1 migrations missing (like `hermes cron status`)",
		responses: { 200: { description: "The fleet's status", content: { "application/json": { schema: Status } } } },
	}),
	async (c) => {
		const now = Date.now();
		const unreadable = (err: unknown) => {
			// Once a minute per isolate, as status.d1_unreadable: the dashboard asks every 15 s a tab.
			if (now - incidentsUnreadableSaidAt >= 60_000) {
				incidentsUnreadableSaidAt = now;
				log.error("status.incidents_unreadable", errorFields(err));
			}
			return null;
		};
		const [{ heartbeat: hb, bytes }, byStatus, api, d1, unpaged, open, held] = await Promise.all([
			readHeartbeatAndSize(c.env.DB),
			countJobsByStatus(c.env.DB),
			countRegisteredAgents(c.env.DB),
			cachedD1Health(c.env.DB, now, (err) => log.error("status.d1_unreadable", errorFields(err))),
			// A D1 behind this release's migrations (said in `d1`) must not cost the rest of the answer.
			unpagedIncidents(c.env.DB, now - UNPAGED_AFTER_MS).catch(unreadable),
			openIncidents(c.env.DB).catch(unreadable),
			// D1 unreadable, the API agents' part is left out (fleet.yaml's is still said), logged once a minute.
			agentsHoldingSecrets(c.env.DB, (err: unknown) => {
				if (now - definitionsUnreadableSaidAt >= 60_000) {
					definitionsUnreadableSaidAt = now;
					log.error("status.definitions_unreadable", errorFields(err));
				}
			}),
		]);
		const warned = (
			[
				["scheduler_behind", hb === null ? null : backlogWarning(hb)],
				["d1_storage", d1StorageWarning(bytes)],
				["incidents_unpaged", unpagedWarning(c.env, unpaged ?? { count: 0, more: false, oldest: null }, now)],
				["definition_secret", heldSecretsWarning(held)],
			] as const
		).filter((w): w is readonly [z.infer<typeof WarningKind>, string] => w[1] !== null);
		return c.json(
			{
				scheduler: {
					...heartbeatHealth(hb, Date.now(), numberVar(c.env, "HEARTBEAT_STALE_SECONDS")),
					agents_called: hb?.agents_called ?? null,
					claimed: hb?.claimed ?? null,
					skipped: hb?.skipped ?? null,
					error: hb?.error ?? null,
					deferred: hb?.deferred ?? null,
					oldest_deferred_minute: hb?.oldest_deferred_at ?? null,
					shards_ok: hb?.shards_ok ?? null,
					shards_failed: hb?.shards_failed ?? null,
					shards_behind: hb?.shards_behind ?? null,
				},
				warnings: warned.map(([, text]) => text),
				warning_kinds: warned.map(([kind]) => kind),
				d1,
				d1_bytes: bytes,
				incidents: open,
				jobs: byStatus,
				agents: { file: loadFleet().agents.length, api },
			},
			200,
		);
	},
);
