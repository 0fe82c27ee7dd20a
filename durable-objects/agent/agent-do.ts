import { DurableObject } from "cloudflare:workers";
import type { JobRecord } from "../../src/jobs/model.ts";
import { migrate } from "../../src/store/sqlite-migrations.ts";
import { jobRowValues, toJobRecord, type JobRow } from "./job-rows.ts";
import { AGENT_MIGRATIONS } from "./schema.ts";

/**
 * One per agent, addressed by the agent's name: the source of truth for that agent's schedule
 * state, occurrence ledger and jobs. Callers use its RPC methods; `fetch` is kept for streams.
 */
export class AgentDO extends DurableObject<Env> {
	readonly schemaVersion: number;

	constructor(ctx: DurableObjectState, env: Env) {
		super(ctx, env);
		// SQLite calls are synchronous, so migrating here finishes before any request or alarm runs.
		this.schemaVersion = migrate(ctx.storage, AGENT_MIGRATIONS);
	}

	async getSchemaVersion(): Promise<number> {
		return this.schemaVersion;
	}

	async getJob(id: string): Promise<JobRecord | null> {
		const row = this.ctx.storage.sql.exec<JobRow>("SELECT * FROM jobs WHERE id = ?", id).toArray()[0];
		return row ? toJobRecord(row) : null;
	}

	/** Stores a record only if it is newer than what is held: revisions never go backwards. */
	async saveJob(job: JobRecord): Promise<boolean> {
		const cursor = this.ctx.storage.sql.exec(
			`INSERT INTO jobs (id, status, created_at, revision, record) VALUES (?, ?, ?, ?, ?)
			 ON CONFLICT (id) DO UPDATE SET status = excluded.status, revision = excluded.revision, record = excluded.record
			 WHERE excluded.revision > jobs.revision`,
			...jobRowValues(job),
		);
		return cursor.rowsWritten > 0;
	}
}
