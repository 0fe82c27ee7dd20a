import { definitionRevision } from "../../src/config/fleet.ts";
import { findAgent } from "../../src/config/bundled.ts";
import { errorFields, log } from "../../src/log.ts";
import { shardName, shardOf } from "../../src/scheduler/shards.ts";
import { markAgentDeleted, upsertRegisteredAgent } from "../../src/store/agent-registry.ts";
import { readState, storedAgentName } from "./state.ts";

/**
 * An API agent's object is the one place its definition is decided (a define or remove runs
 * synchronously there, so two callers cannot both create or both delete it). Its scheduler shard
 * (which ticks it) and the D1 registry (which lists it) follow: every define or remove notes a
 * pending sync in the same synchronous section as its write, and a sync makes the shard and the
 * registry hold what the object holds as the sync starts. The define or remove awaits one; the
 * object's alarm runs it for one cut off (its caller's Worker or the object itself killed, the
 * shard or D1 down), so a write the object kept is never lost to the rest of the system.
 */

/** A pending sync younger than this is its define's or remove's own to finish; older, the alarm's. */
export const SYNC_GRACE_MS = 5_000;
/** How soon the alarm tries again after the shard or D1 refused a sync. */
const SYNC_RETRY_MS = 10_000;

interface PendingRow {
	seq: number;
	by: string;
	at: number;
	due_at: number;
	[key: string]: SqlStorageValue;
}

function pendingSync(sql: SqlStorage): PendingRow | null {
	return sql.exec<PendingRow>("SELECT seq, by, at, due_at FROM registry_sync WHERE id = 1").toArray()[0] ?? null;
}

/** Notes that the shard and the registry must catch up with agent_state: in the same synchronous section as the write. */
export function queueSync(sql: SqlStorage, by: string, at: number): void {
	sql.exec(
		`INSERT INTO registry_sync (id, seq, by, at, due_at) VALUES (1, 1, ?, ?, ?)
		 ON CONFLICT (id) DO UPDATE SET seq = seq + 1, by = excluded.by, at = excluded.at, due_at = excluded.due_at`,
		by,
		at,
		at + SYNC_GRACE_MS,
	);
}

/**
 * Who the object is (null before it has heard its name), and whether it holds a live (not deleted)
 * definition, judged without parsing it: one stored by an older release that no longer parses still
 * counts (a PUT repairs it, a POST is refused).
 */
export function definedAgent(sql: SqlStorage): { name: string; source: string; live: boolean; deletedAt: number | null } | null {
	const row = sql
		.exec<{ name: string; source: string; deleted_at: number | null; has: number }>(
			"SELECT name, source, deleted_at, definition IS NOT NULL AS has FROM agent_state WHERE id = 1",
		)
		.toArray()[0];
	if (!row) return null;
	const live = row.deleted_at === null && (row.source === "api" ? row.has === 1 : findAgent(row.name) !== undefined);
	return { name: row.name, source: row.source, live, deletedAt: row.deleted_at };
}

/** One per AgentDO instance: its syncs run one after another, never interleaved. */
export class RegistrySync {
	private readonly sql: SqlStorage;
	private readonly currentEnv: () => Env;
	/** The latest sync; the next starts after it, however it ended. */
	private chain: Promise<void> = Promise.resolve();

	constructor(sql: SqlStorage, env: () => Env) {
		this.sql = sql;
		this.currentEnv = env;
	}

	/**
	 * Brings the shard and the registry in line with the object's state as it is when this sync
	 * starts, after any sync already under way. Rejects with the shard's or D1's error, the pending
	 * row kept for the alarm.
	 */
	sync(): Promise<void> {
		const run = this.chain.then(() => this.syncNow());
		this.chain = run.catch(() => {});
		return run;
	}

	/** When the alarm should run a sync: null when none is pending. */
	dueAt(): number | null {
		return pendingSync(this.sql)?.due_at ?? null;
	}

	/**
	 * The alarm's part: a sync left pending past its grace. Never rejects: a failure waits for the
	 * retry, which dueAt puts among the next alarm's candidates.
	 */
	async catchUp(now = Date.now()): Promise<void> {
		const due = this.dueAt();
		if (due === null || due > now) return;
		try {
			await this.sync();
			log.info("agent.registry_synced_late", { agent: storedAgentName(this.sql) });
		} catch {
			// Logged by syncNow.
		}
	}

	private async syncNow(): Promise<void> {
		for (;;) {
			const pending = pendingSync(this.sql);
			if (!pending) return;
			const state = readState(this.sql);
			try {
				// A file agent, or an API agent whose name a deploy gave fleet.yaml (not switched over yet: its
				// shard's fleet sync has made it the file agent and retired its D1 row), is not the
				// registry's: registering it again would turn it back into the API agent.
				if (state && state.source === "api" && !findAgent(state.name)) {
					const env = this.currentEnv();
					const shard = env.SCHEDULER_SHARD.getByName(shardName(shardOf(state.name)));
					if (state.deletedAt === null && state.definition) {
						const revision = state.definitionRevision ?? (await definitionRevision(state.definition));
						await shard.register(state.name);
						await upsertRegisteredAgent(env.DB, state.definition, revision, pending.by, pending.at);
					} else {
						await shard.unregister(state.name);
						await markAgentDeleted(env.DB, state.name, state.deletedAt ?? pending.at);
					}
				}
			} catch (err) {
				// Not at once again: the alarm would spin on a store that is down.
				this.sql.exec("UPDATE registry_sync SET due_at = ? WHERE id = 1", Date.now() + SYNC_RETRY_MS);
				log.warn("agent.registry_sync_failed", { agent: state?.name, ...errorFields(err) });
				throw err;
			}
			// A write that came while the shard and D1 were being told is theirs to hear next: the row
			// stays, and this loop (or the sync that write queued) tells them.
			this.sql.exec("DELETE FROM registry_sync WHERE id = 1 AND seq = ?", pending.seq);
		}
	}
}
