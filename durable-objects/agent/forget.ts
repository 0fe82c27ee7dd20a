import type { AgentDefinition } from "../../src/config/schema.ts";
import { outboxSize, type OutboxAcks } from "./outbox.ts";
import { keptDefinition, readState } from "./state.ts";

/**
 * Tables whose rows a deleted agent's object may still hold once nothing of it is left: what a define
 * of its name drops anyway (forgetDeletedAgent, forgetSchedules), the object's own bookkeeping, and
 * the outbox, judged by what D1 has acknowledged. A row in any other table (a job, a ledger row, an
 * effect, send or incident event still to go, a registry sync pending, and whatever a later schema
 * step adds) keeps the agent.
 */
const LEFT_BEHIND: ReadonlySet<string> = new Set([
	"agent_state",
	"schema_migrations",
	"schedule_state",
	"idempotency",
	"webhook_seen",
	"notepad",
	"persistent_session",
	"incident_watch",
	"outbox",
]);

export interface Forgettable {
	name: string;
	deletedAt: number;
	/** When it may be forgotten: its retention after the delete (its history's last record ends by then). */
	at: number;
}

/**
 * A deleted API agent of which nothing is left, and when its object may forget it (its storage, and
 * its registry row, deleted: see AgentDO.forgetIfGone); null for any other agent, or while anything is
 * left. Its retention after the delete keeps the name known (its runs listed, empty; a lowered
 * RETENTION_DAYS told to it) as long as a record of it could have been. A file agent a deploy dropped
 * keeps its object: its notepad and pause are its again if a deploy adds it back.
 */
export function forgettable(sql: SqlStorage, acked: OutboxAcks, retentionMs: (definition: AgentDefinition | null) => number): Forgettable | null {
	let state;
	try {
		state = readState(sql);
	} catch {
		// A definition that no longer parses: not forgotten on a guess.
		return null;
	}
	if (!state || state.source !== "api" || state.deletedAt === null) return null;
	if (outboxSize(sql, acked) > 0 || holdsRowsOutside(sql, LEFT_BEHIND)) return null;
	return { name: state.name, deletedAt: state.deletedAt, at: state.deletedAt + retentionMs(keptDefinition(state)) };
}

/**
 * No agent here at all: no agent_state row and nothing in any table but the schema's own record.
 * What a call to a forgotten agent's object leaves (its schema made again to answer it: the shard's
 * retention notice, or a read that passed the registry just before the row went), which nothing
 * would ever wake to delete.
 */
export function isBlank(sql: SqlStorage): boolean {
	return sql.exec("SELECT 1 FROM agent_state LIMIT 1").toArray().length === 0 && !holdsRowsOutside(sql, SCHEMA_ONLY);
}

const SCHEMA_ONLY: ReadonlySet<string> = new Set(["schema_migrations"]);

/** Whether any of the object's tables but `except` holds a row: every table, whatever later schema steps add. */
function holdsRowsOutside(sql: SqlStorage, except: ReadonlySet<string>): boolean {
	const tables = sql
		.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'")
		.toArray()
		.map((r) => r.name)
		.filter((name) => !except.has(name));
	// Names from sqlite_master (the schema's own, never input), quoted as SQLite quotes an identifier.
	return tables.some((name) => sql.exec(`SELECT 1 FROM "${name.replaceAll('"', '""')}" LIMIT 1`).toArray().length > 0);
}
