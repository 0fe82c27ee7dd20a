import { findAgent } from "../../src/config/bundled.ts";
import type { AgentDefinition } from "../../src/config/schema.ts";
import { FINAL_STATUSES } from "../../src/jobs/schema.ts";
import { log } from "../../src/log.ts";
import { jsonMemo } from "../../src/shared/json-memo.ts";
import { stampDeletedHistory } from "./retention.ts";
import { forgetSchedules } from "./scheduling.ts";

export type AgentSource = "file" | "api";

interface AgentStateRow {
	name: string;
	source: string;
	definition: string | null;
	definition_revision: string | null;
	deleted_at: number | null;
	paused_at: number | null;
	paused_reason: string | null;
	paused_by: string | null;
	[key: string]: SqlStorageValue;
}

export interface AgentState {
	name: string;
	source: AgentSource;
	/** The definition an API agent was given; file agents read theirs from the bundle (a dropped one keeps its last here). */
	definition: AgentDefinition | null;
	definitionRevision: string | null;
	deletedAt: number | null;
	pausedAt: number | null;
	pausedReason: string | null;
	/** "auto" for a pause drover made itself; otherwise the name of the token that paused it. */
	pausedBy: string | null;
}

const parseDefinition = jsonMemo<AgentDefinition>();

function toAgentState(row: AgentStateRow): AgentState {
	return {
		name: row.name,
		source: row.source as AgentSource,
		definition: row.definition === null ? null : parseDefinition(row.definition),
		definitionRevision: row.definition_revision,
		deletedAt: row.deleted_at,
		pausedAt: row.paused_at,
		pausedReason: row.paused_reason,
		pausedBy: row.paused_by,
	};
}

export function readState(sql: SqlStorage): AgentState | null {
	const row = sql.exec<AgentStateRow>("SELECT * FROM agent_state WHERE id = 1").toArray()[0];
	return row ? toAgentState(row) : null;
}

/** The agent's name as stored, for a log line or a read by agent: undefined before a call first names it. */
export function storedAgentName(sql: SqlStorage): string | undefined {
	return readState(sql)?.name;
}

/**
 * Records which agent this object is, the first time it hears its name. An API agent whose name a
 * deploy then gives to a fleet.yaml agent becomes that file agent: fleet.yaml wins a name, as it does
 * against a new API agent (409). A live one keeps its history, notepad, pause and schedule cursors,
 * as a redefinition by PUT does; a deleted one's name starts afresh, as a re-created API agent does,
 * its history kept no longer than its own retention (`retentionMs` of its last definition) promised.
 */
export function ensureState(sql: SqlStorage, name: string, source: AgentSource, retentionMs: (definition: AgentDefinition | null) => number): AgentState {
	const known = readState(sql);
	if (known && !(known.source === "api" && source === "file" && findAgent(known.name))) return known;
	if (known) {
		if (known.deletedAt !== null) {
			stampDeletedHistory(sql, retentionMs(known.definition));
			forgetDeletedAgent(sql);
			forgetSchedules(sql);
		}
		sql.exec("UPDATE agent_state SET source = 'file', definition = NULL, definition_revision = NULL, deleted_at = NULL WHERE id = 1");
		log.warn("agent.replaced_by_file", { agent: name, was_deleted: known.deletedAt !== null });
		return readState(sql)!;
	}
	sql.exec("INSERT INTO agent_state (id, name, source) VALUES (1, ?, ?) ON CONFLICT (id) DO NOTHING", name, source);
	const state = readState(sql);
	if (!state) throw new Error("agent_state row missing after insert");
	return state;
}

export function saveDefinition(sql: SqlStorage, name: string, definition: AgentDefinition, revision: string): void {
	sql.exec(
		`INSERT INTO agent_state (id, name, source, definition, definition_revision) VALUES (1, ?, 'api', ?, ?)
		 ON CONFLICT (id) DO UPDATE SET source = 'api', definition = excluded.definition,
		   definition_revision = excluded.definition_revision, deleted_at = NULL`,
		name,
		JSON.stringify(definition),
		revision,
	);
}

/** A file agent gone from fleet.yaml: its last definition, kept for its history's retention. */
export function keepLastDefinition(sql: SqlStorage, definition: AgentDefinition): void {
	sql.exec("UPDATE agent_state SET definition = ? WHERE id = 1 AND source = 'file'", JSON.stringify(definition));
}

/**
 * Before a deleted agent's name is defined again: the new agent keeps none of the old one's notepad,
 * Idempotency-Keys or pause (nor its schedules' cursors: see forgetSchedules). The old agent's jobs
 * and ledger stay, readable for retention, and stay the old agent's (see deletedAgentsJob).
 */
export function forgetDeletedAgent(sql: SqlStorage): void {
	sql.exec("DELETE FROM notepad");
	sql.exec("DELETE FROM idempotency");
	// A resend of a deleted agent's webhook would be answered with the deleted agent's job.
	sql.exec("DELETE FROM webhook_seen");
	// A run of the deleted agent that completed after the delete may have left one.
	sql.exec("DELETE FROM persistent_session");
	sql.exec("UPDATE agent_state SET paused_at = NULL, paused_reason = NULL, paused_by = NULL WHERE id = 1");
	// What of the deleted agent can still end once the new one exists: a run going on its manifest,
	// an ended run whose effects are still to be queued, an answer or hook still to be sent (one out
	// now, or cut off by an eviction, reads 'sending'). Its queue was cancelled at the delete.
	sql.exec(
		`INSERT OR IGNORE INTO former_agent_jobs (job_id)
		 SELECT id FROM jobs WHERE status NOT IN (SELECT value FROM json_each(?))
		 UNION SELECT job_id FROM final_effects
		 UNION SELECT job_id FROM deliveries WHERE status IN ('pending', 'sending', 'held')`,
		JSON.stringify(FINAL_STATUSES),
	);
}

/** Whether the job is a deleted agent's, still ending after its name was given to a new agent. */
export function deletedAgentsJob(sql: SqlStorage, jobId: string): boolean {
	return sql.exec("SELECT 1 FROM former_agent_jobs WHERE job_id = ?", jobId).toArray().length > 0;
}

export function markDeleted(sql: SqlStorage, at: number): void {
	sql.exec("UPDATE agent_state SET deleted_at = ? WHERE id = 1", at);
}

export function setPaused(sql: SqlStorage, at: number | null, reason: string | null, by: string | null): void {
	sql.exec("UPDATE agent_state SET paused_at = ?, paused_reason = ?, paused_by = ? WHERE id = 1", at, reason, by);
}

/**
 * The definition this agent runs with now: the bundled fleet.yaml for file agents (so a deploy
 * changes it), the stored one for API agents. A deleted or unknown agent has none.
 */
export function currentDefinition(state: AgentState): AgentDefinition | null {
	if (state.deletedAt !== null) return null;
	if (state.source === "file") return findAgent(state.name) ?? null;
	return state.definition;
}

/** The definition whose retention an agent's history keeps: its current one, or a deleted API agent's or dropped file agent's last. */
export function keptDefinition(state: AgentState): AgentDefinition | null {
	return currentDefinition(state) ?? state.definition;
}
