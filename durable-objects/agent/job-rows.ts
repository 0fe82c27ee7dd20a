import type { JobRecord } from "../../src/jobs/model.ts";

/** A row of AgentDO's `jobs` table. The record column is the whole JobRecord as JSON. */
export interface JobRow {
	id: string;
	status: string;
	created_at: number;
	revision: number;
	record: string;
	[key: string]: SqlStorageValue;
}

export function toJobRecord(row: JobRow): JobRecord {
	return JSON.parse(row.record) as JobRecord;
}

export function jobRowValues(job: JobRecord): [string, string, number, number, string] {
	return [job.id, job.status, Date.parse(job.created_at), job.revision, JSON.stringify(job)];
}
