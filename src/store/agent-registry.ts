import type { AgentDefinition, DefinitionSummary, ToolSummary } from "../config/schema.ts";

/** A row of the D1 `agents` table: an agent defined through the API. */
interface AgentRow {
	name: string;
	definition: string;
	definition_revision: string;
	created_by: string;
	created_at: number;
	updated_at: number;
	deleted_at: number | null;
}

export interface RegisteredAgent {
	name: string;
	/** Null for a deleted agent: its row keeps its name, not its definition (see markAgentDeleted). */
	definition: AgentDefinition | null;
	definitionRevision: string;
	createdBy: string;
	createdAt: number;
	updatedAt: number;
	deletedAt: number | null;
}

function toRegisteredAgent(row: AgentRow): RegisteredAgent {
	return {
		name: row.name,
		definition: JSON.parse(row.definition) as AgentDefinition | null,
		definitionRevision: row.definition_revision,
		createdBy: row.created_by,
		createdAt: row.created_at,
		updatedAt: row.updated_at,
		deletedAt: row.deleted_at,
	};
}

export async function getRegisteredAgent(db: D1Database, name: string): Promise<RegisteredAgent | null> {
	const row = await db.prepare("SELECT * FROM agents WHERE name = ?").bind(name).first<AgentRow>();
	return row ? toRegisteredAgent(row) : null;
}

/**
 * Whether the name ever was an agent: registered through the API (deleted or not) or indexed with a
 * job (a file agent a deploy dropped). Reads of history ask this before waking the agent's object,
 * which would otherwise be created, and stored, for any name asked about.
 */
export async function agentEverExisted(db: D1Database, name: string): Promise<boolean> {
	const row = await db
		.prepare("SELECT EXISTS (SELECT 1 FROM agents WHERE name = ?1) OR EXISTS (SELECT 1 FROM jobs WHERE agent = ?1) AS seen")
		.bind(name)
		.first<{ seen: number }>();
	return row?.seen === 1;
}

/** A row of the listing of `agents` (listRegisteredAgents): a definition's summary, as JSON pieces. */
interface AgentListRow {
	name: string;
	/** The definition without its schedules, tools and the text it does not show. */
	rest: string;
	has_prompt: number;
	schedules: string;
	tools: string;
}

export interface ListedAgent {
	name: string;
	definition: DefinitionSummary;
	hasDefaultPrompt: boolean;
}

/** The summary's fields the listing copies from `rest` (a field added to DefinitionSummary must be added here: checked below). */
const LISTED_FIELDS = ["name", "enabled", "model", "fallback_models", "max_concurrent", "overlap", "timeout", "approval_timeout", "webhook", "hooks", "delivery"] as const;
// A compile-time check that LISTED_FIELDS names every field of the summary but the two read apart.
const listsEveryField: Exclude<keyof Omit<DefinitionSummary, "schedules" | "tools">, (typeof LISTED_FIELDS)[number]> extends never ? true : never = true;
void listsEveryField;

function toListedAgent(row: AgentListRow): ListedAgent {
	const rest = JSON.parse(row.rest) as Omit<DefinitionSummary, "schedules" | "tools">;
	return {
		name: row.name,
		definition: {
			...(Object.fromEntries(LISTED_FIELDS.map((key) => [key, rest[key]])) as Omit<DefinitionSummary, "schedules" | "tools">),
			schedules: JSON.parse(row.schedules) as DefinitionSummary["schedules"],
			tools: JSON.parse(row.tools) as ToolSummary[],
		},
		hasDefaultPrompt: row.has_prompt === 1,
	};
}

/**
 * Names starting with a prefix (bound twice), as a range the name index answers: agent names are
 * [a-z0-9-], all below "~". An empty prefix is every name.
 */
const PREFIX_RANGE = "name >= ? AND name < ? || '~'";

/**
 * Live (not deleted) API agents in name order, after `after`, but for the names in `except`: their
 * definitions' summaries. A page of whole definitions (201 rows of up to 256 KiB) would be 51 MB, past
 * D1's result limit and straining the Worker's 128 MB; SQLite's JSON functions leave the text behind
 * (the system prompt, prompts, tool descriptions, schemas and server tools' definitions). `prefix`:
 * only names starting with it.
 */
export async function listRegisteredAgents(db: D1Database, limit: number, after?: string, except: readonly string[] = [], prefix = ""): Promise<ListedAgent[]> {
	// One JSON parameter for the names, not one each: D1 binds at most 100 parameters.
	const stmt = db
		.prepare(
			`SELECT name,
			   json_remove(definition, '$.system_prompt', '$.prompt', '$.schedules', '$.tools', '$.usage_limits', '$.session') AS rest,
			   json_type(definition, '$.prompt') = 'text' AS has_prompt,
			   (SELECT json_group_object(s.key, json_remove(s.value, '$.prompt')) FROM json_each(definition, '$.schedules') AS s) AS schedules,
			   (SELECT json_group_array(json_remove(t.value, '$.description', '$.input_schema', '$.definition', '$.allow_hosts', '$.methods'))
			      FROM json_each(definition, '$.tools') AS t) AS tools
			 FROM agents WHERE deleted_at IS NULL AND name > ? AND ${PREFIX_RANGE} AND name NOT IN (SELECT value FROM json_each(?)) ORDER BY name LIMIT ?`,
		)
		.bind(after ?? "", prefix, prefix, JSON.stringify(except), limit);
	const { results } = await stmt.all<AgentListRow>();
	return results.map(toListedAgent);
}

/**
 * Live API agents' names and definition revisions in name order, after `after`: a page of the status
 * warning's look through the registry for a secret's value, which reads a definition (up to 256 KiB)
 * only at a revision it has not looked at (registeredDefinitions).
 */
export async function pageOfRegisteredRevisions(db: D1Database, limit: number, after = ""): Promise<{ name: string; definitionRevision: string }[]> {
	const { results } = await db
		.prepare("SELECT name, definition_revision FROM agents WHERE deleted_at IS NULL AND name > ? ORDER BY name LIMIT ?")
		.bind(after, limit)
		.all<Pick<AgentRow, "name" | "definition_revision">>();
	return results.map((r) => ({ name: r.name, definitionRevision: r.definition_revision }));
}

/**
 * The named live API agents' whole definitions, a page's few (D1 binds at most 100 parameters): a
 * name each, looked up by the primary key, where a json_each list counted its own rows as read too.
 */
export async function registeredDefinitions(db: D1Database, names: readonly string[]): Promise<{ name: string; definition: AgentDefinition; definitionRevision: string }[]> {
	if (names.length === 0) return [];
	if (names.length > 100) throw new Error(`registeredDefinitions takes at most 100 names, not ${names.length}`);
	const { results } = await db
		.prepare(`SELECT name, definition, definition_revision FROM agents WHERE deleted_at IS NULL AND name IN (${names.map(() => "?").join(", ")})`)
		.bind(...names)
		.all<Pick<AgentRow, "name" | "definition" | "definition_revision">>();
	return results.map((r) => ({ name: r.name, definition: JSON.parse(r.definition) as AgentDefinition, definitionRevision: r.definition_revision }));
}

/**
 * Live API agents' names in name order, after `after`, but for the names in `except`: the listing's
 * rows without their definitions, for a caller that wants only the names (GET /v1/agents?view=names).
 */
export async function listRegisteredAgentNames(db: D1Database, limit: number, after?: string, except: readonly string[] = [], prefix = ""): Promise<string[]> {
	const { results } = await db
		.prepare(`SELECT name FROM agents WHERE deleted_at IS NULL AND name > ? AND ${PREFIX_RANGE} AND name NOT IN (SELECT value FROM json_each(?)) ORDER BY name LIMIT ?`)
		.bind(after ?? "", prefix, prefix, JSON.stringify(except), limit)
		.all<{ name: string }>();
	return results.map((r) => r.name);
}

/** Which of `names` are live API agents in the registry (one JSON parameter: D1 binds at most 100). */
export async function liveRegisteredAmong(db: D1Database, names: readonly string[]): Promise<{ name: string }[]> {
	const { results } = await db
		.prepare("SELECT name FROM agents WHERE deleted_at IS NULL AND name IN (SELECT value FROM json_each(?))")
		.bind(JSON.stringify(names))
		.all<{ name: string }>();
	return results;
}

/** A D1 without migration 0014: a Worker deployed ahead of its D1. */
const countsMissing = (err: unknown) => err instanceof Error && /no such table: agent_counts/.test(err.message);

/**
 * The live API agents, as agent_counts keeps them (D1 0014): one row read, where counting the
 * agents_live index read one per agent, at each GET /v1/status.
 */
export async function countRegisteredAgents(db: D1Database): Promise<number> {
	try {
		return (await db.prepare("SELECT live FROM agent_counts WHERE id = 1").first<{ live: number }>())?.live ?? 0;
	} catch (err) {
		// A Worker deployed ahead of its D1 (0014 not applied yet): counted from the index as before,
		// so that GET /v1/status still answers, and says which migrations are missing.
		if (!countsMissing(err)) throw err;
		return (await db.prepare("SELECT count(*) AS n FROM agents WHERE deleted_at IS NULL").first<{ n: number }>())?.n ?? 0;
	}
}

/**
 * Counts the live agents again, for a count a Worker before D1 0014 left behind (an agent defined or
 * deleted between the migration and the deploy): the count it made where it differed, else null.
 */
export async function recountRegisteredAgents(db: D1Database): Promise<number | null> {
	// An upsert, so that a row gone missing is made again rather than read as 0 for good.
	const row = await db
		.prepare(
			`INSERT INTO agent_counts (id, live) SELECT 1, count(*) FROM agents WHERE deleted_at IS NULL
			 ON CONFLICT (id) DO UPDATE SET live = excluded.live WHERE agent_counts.live IS NOT excluded.live RETURNING live`,
		)
		.first<{ live: number }>();
	return row?.live ?? null;
}

export async function upsertRegisteredAgent(db: D1Database, agent: AgentDefinition, revision: string, by: string, now: number): Promise<void> {
	const write = db
		.prepare(
			`INSERT INTO agents (name, definition, definition_revision, created_by, created_at, updated_at, deleted_at)
			 VALUES (?, ?, ?, ?, ?, ?, NULL)
			 ON CONFLICT (name) DO UPDATE SET definition = excluded.definition, definition_revision = excluded.definition_revision,
			   updated_at = excluded.updated_at, deleted_at = NULL,
			   created_by = CASE WHEN agents.deleted_at IS NULL THEN agents.created_by ELSE excluded.created_by END,
			   created_at = CASE WHEN agents.deleted_at IS NULL THEN agents.created_at ELSE excluded.created_at END`,
		)
		.bind(agent.name, JSON.stringify(agent), revision, by, now, now);
	// A batch is one transaction: the count moves only with the row, and only when it makes a live one.
	await withCount(db, write, db.prepare("UPDATE agent_counts SET live = live + 1 WHERE id = 1 AND NOT EXISTS (SELECT 1 FROM agents WHERE name = ? AND deleted_at IS NULL)").bind(agent.name));
}

/**
 * Marks the agent deleted, and drops its definition (up to 256 KiB, `null` in the NOT NULL column):
 * nothing reads a deleted agent's from here (its own object keeps what its history needs), and a
 * define of the name writes the new one whole.
 */
export async function markAgentDeleted(db: D1Database, name: string, now: number): Promise<void> {
	await withCount(
		db,
		db.prepare("UPDATE agents SET deleted_at = ?, updated_at = ?, definition = 'null' WHERE name = ?").bind(now, now, name),
		db.prepare("UPDATE agent_counts SET live = live - 1 WHERE id = 1 AND EXISTS (SELECT 1 FROM agents WHERE name = ? AND deleted_at IS NULL)").bind(name),
	);
}

/**
 * Runs a registry write with the count's update before it, in one batch. A Worker deployed ahead of
 * its D1 (0014 not applied yet) writes the row alone: the migration counts the rows as it runs.
 */
async function withCount(db: D1Database, write: D1PreparedStatement, count: D1PreparedStatement): Promise<void> {
	try {
		await db.batch([count, write]);
	} catch (err) {
		if (!countsMissing(err)) throw err;
		await write.run();
	}
}

/**
 * Deletes a deleted agent's row, once its object has nothing left of it (see forget.ts): only the row
 * of that deletion (`deletedAt`, as its object marked it), so a define of the name that reached D1
 * first, or a later delete of it, keeps its row whichever statement D1 runs first.
 */
export async function forgetRegisteredAgent(db: D1Database, name: string, deletedAt: number): Promise<void> {
	await db.prepare("DELETE FROM agents WHERE name = ? AND deleted_at = ?").bind(name, deletedAt).run();
}
