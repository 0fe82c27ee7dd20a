/**
 * Which agents' definitions hold one of the Worker's secret values (see definition-secrets.ts), for
 * GET /v1/status's `definition_secret` warning and the agent.definition_secret log line: each names
 * the agent and the fields, never the value. Reads already show the marker in its place; this tells
 * the operator to take the value out (and, since it may have been read before, to rotate it).
 */
import type { Fleet } from "../config/schema.ts";
import { loadFleet } from "../config/bundled.ts";
import { log } from "../log.ts";
import { pageOfRegisteredRevisions, registeredDefinitions } from "../store/agent-registry.ts";
import { REDACTED } from "./redact.ts";
import { secretValuePaths, type HeldAt } from "./definition-secrets.ts";

export interface HeldSecret {
	agent: string;
	source: "file" | "api";
	fields: string[];
}

const fieldsOf = (held: HeldAt[]): string[] => [...new Set(held.map((h) => (h.key ? `a key in ${h.path}` : h.path)))];

/**
 * The log line, once an isolate for each agent's revision: a read of the agent says it (every read
 * would flood the log), as does the status scan.
 */
export function sayHeldSecret(agent: string, source: "file" | "api", revision: string, held: HeldAt[]): void {
	if (held.length === 0) return;
	log.once("warn", "agent.definition_secret", `${source}:${agent}:${revision}`, { agent, source, fields: fieldsOf(held), definition_revision: revision });
}

// fleet.yaml and the secrets are fixed for an isolate: its agents are looked at once (again only
// when tests bundle another file).
let fileScan: { fleet: Fleet; held: HeldSecret[] } | undefined;

function fileAgentsHolding(): HeldSecret[] {
	const fleet = loadFleet();
	if (fileScan?.fleet !== fleet) {
		const held = fleet.agents.map((a) => ({ agent: a.name, held: secretValuePaths(a) })).filter((a) => a.held.length > 0);
		// A file agent's revision is not needed to key its line: the file only changes with a new isolate.
		for (const a of held) sayHeldSecret(a.agent, "file", "fleet.yaml", a.held);
		fileScan = { fleet, held: held.map((a) => ({ agent: a.agent, source: "file", fields: fieldsOf(a.held) })) };
	}
	return fileScan.held;
}

/**
 * API agents are looked at a page of PAGE_ROWS a status request, where the last left off: a scan of
 * the whole registry in one request read 1,000 definitions for a fleet of 1,000 (the status is asked
 * every 10 s by each dashboard tab). A registry of n agents is looked through every n / PAGE_ROWS
 * requests by each isolate, which keeps what it found at each agent's revision: a page reads the
 * names and revisions, and a definition (up to 256 KiB) only at a revision new to it, since the
 * secrets, like fleet.yaml, are fixed for an isolate. An agent this isolate writes is looked at anew.
 */
export const PAGE_ROWS = 10;
const apiScan = { after: "", seen: new Map<string, { revision: string; held: HeldSecret | null }>() };

async function apiAgentsHolding(db: D1Database): Promise<HeldSecret[]> {
	const from = apiScan.after;
	const page = await pageOfRegisteredRevisions(db, PAGE_ROWS, from);
	const last = page.length < PAGE_ROWS ? null : page.at(-1)!.name;
	const fileNames = new Set(loadFleet().agents.map((a) => a.name));
	// What the page covers is read afresh: an agent deleted drops out, one changed (through another
	// isolate too) is looked at again, and fleet.yaml's agent of a name is the one shown.
	const listed = new Map(page.filter((r) => !fileNames.has(r.name)).map((r) => [r.name, r.definitionRevision]));
	for (const name of apiScan.seen.keys()) if (name > from && (last === null || name <= last) && !listed.has(name)) apiScan.seen.delete(name);
	const changed = [...listed].filter(([name, revision]) => apiScan.seen.get(name)?.revision !== revision).map(([name]) => name);
	if (changed.length > 0) {
		for (const name of changed) apiScan.seen.delete(name);
		for (const row of await registeredDefinitions(db, changed)) {
			const found = secretValuePaths(row.definition);
			if (found.length > 0) sayHeldSecret(row.name, "api", row.definitionRevision, found);
			apiScan.seen.set(row.name, { revision: row.definitionRevision, held: found.length === 0 ? null : { agent: row.name, source: "api", fields: fieldsOf(found) } });
		}
	}
	apiScan.after = last ?? "";
	return [...apiScan.seen.values()].flatMap((s) => (s.held ? [s.held] : [])).sort((a, b) => (a.agent < b.agent ? -1 : 1));
}

/** An API agent was written (or deleted) through this isolate: looked at anew when its page comes (a write holding a secret's value is refused, so it holds none now). */
export function forgetHeldSecret(agent: string): void {
	apiScan.seen.delete(agent);
}

/**
 * Every agent whose definition holds a secret's value: fleet.yaml's first, then the API's, by name.
 * D1 unreadable, the API's are left out (`unreadable` is told why) and fleet.yaml's still named.
 */
export async function agentsHoldingSecrets(db: D1Database, unreadable: (err: unknown) => void): Promise<HeldSecret[]> {
	const file = fileAgentsHolding();
	const api = await apiAgentsHolding(db).catch((err: unknown) => {
		unreadable(err);
		return [];
	});
	return [...file, ...api];
}

const LISTED = 5;

/** The status warning, or null when no definition holds one. */
export function heldSecretsWarning(held: HeldSecret[]): string | null {
	if (held.length === 0) return null;
	const named = held.slice(0, LISTED).map((h) => `${h.agent} (${h.source === "file" ? "fleet.yaml" : "API"}: ${h.fields.join(", ")})`);
	const more = held.length > LISTED ? ` and ${held.length - LISTED} more (the Worker's agent.definition_secret lines name each)` : "";
	return (
		`definitions hold the value of one of the Worker's secrets, shown to read tokens as ${REDACTED} in its place: ${named.join("; ")}${more}. ` +
		"Name the secret instead (url_secret, webhook.secret): in fleet.yaml and deploy, or PUT the API agent's field written anew; and rotate the secret, as it may have been read before"
	);
}
