import { ConfigError } from "../errors.ts";
import { sha256Hex } from "../shared/hash.ts";
import { decodeUtf8, notUtf8, saveAsUtf8 } from "../shared/well-formed.ts";
import { issuesOf, type Issue } from "../shared/zod-issues.ts";
import { DEPRECATED_MODELS } from "./models.ts";
import { FleetSchema, type AgentDefinition, type Fleet } from "./schema.ts";
import { parseYaml12, positionIn, unreadable } from "./yaml.ts";

/**
 * Parses and validates a whole fleet file. Any problem rejects the file as a whole, with every issue
 * listed: one bad schedule must never be dropped while the rest loads.
 */
export function parseFleet(text: string, source = "fleet.yaml"): Fleet {
	const parsed = parseYaml12(text);
	const { doc } = parsed;
	const faults = unreadable(parsed);
	if (faults.length > 0) throw invalid(source, faults.map((f) => ({ path: f.line !== undefined ? `line ${f.line}:${f.col}` : "(yaml)", message: f.message })));
	let data: unknown;
	try {
		data = doc.toJS();
	} catch (error) {
		throw invalid(source, [{ path: "(yaml)", message: error instanceof Error ? error.message : String(error) }]);
	}
	if (data === null || data === undefined) {
		throw invalid(source, [{ path: "(root)", message: "the file is empty; it needs version: 1 and a list of agents" }]);
	}
	const result = FleetSchema.safeParse(data);
	// Each said with its line in the message; listed (the API, /healthz) as path and message.
	if (!result.success) {
		const placed = issuesOf(result.error, positionIn(parsed));
		throw invalid(source, placed.map(({ path, message }) => ({ path, message })), data, placed);
	}
	return result.data;
}

/**
 * fleet.yaml as its bytes, parsed as parseFleet parses its text; bytes that are not UTF-8 are refused
 * saying where, rather than read with U+FFFD in their place (a Latin-1 "Müller" deployed as
 * "M\uFFFDller"). Both `npm run check` and the Worker read the file so: `drover apply` refuses it too.
 */
export function parseFleetBytes(bytes: Uint8Array, source = "fleet.yaml"): Fleet {
	const text = decodeUtf8(bytes, "the file");
	if (typeof text !== "string") throw invalid(source, [{ path: "(file)", message: `${notUtf8("the file", text)}; ${saveAsUtf8(text)}` }]);
	return parseFleet(text, source);
}

/** First 16 hex of SHA-256 over the agent's canonical JSON: jobs record it to detect a changed definition. */
export async function definitionRevision(agent: AgentDefinition): Promise<string> {
	return (await sha256Hex(canonicalJson(agent))).slice(0, 16);
}

/** Why a create is refused: the name is a live agent's. */
export const alreadyDefined = (name: string) => `agent ${name} already exists; PUT /v1/agents/${name} changes it`;
/** Why a replace is refused: no agent has the name. */
export const notDefined = (name: string) => `no agent named ${name}; POST /v1/agents creates one`;
/** A deleted API agent's 404, not yet forgotten: when it was deleted, not that it never was. */
export const wasDeleted = (name: string, at: number) => `no agent named ${name}: it was deleted at ${new Date(at).toISOString()}`;
/** A write's refusal for an agent deleted in its object: when, so an operator whose write crossed the delete learns of it. */
export const deletedUnchanged = (name: string, at: number) => `${wasDeleted(name, at)}; nothing was changed`;
/** Why a replace of a deleted API agent is refused (its object's refusal, and a dry run's). */
export const deletedSince = (name: string, at: number) => `${deletedUnchanged(name, at)}; POST /v1/agents defines it again`;

/** Why a change made on revision `asked` is refused (If-Match): the agent is at `current` now. */
export function revisionChanged(name: string, asked: string, current: string | null): string {
	return `agent ${name} has changed since revision ${asked}: it is at revision ${current ?? "(none readable)"} now; read it again and make the change there`;
}

/** Warnings for agents whose model or fallback model is deprecated (or already retired) as of `today`. */
export function modelWarnings(fleet: Fleet, today: Date): string[] {
	const warnings: string[] = [];
	for (const agent of fleet.agents) {
		const uses = [["model", agent.model], ...agent.fallback_models.map((m) => ["fallback model", m])] as const;
		for (const [role, model] of uses) {
			const endOfLife = DEPRECATED_MODELS[model];
			if (endOfLife === undefined) continue;
			warnings.push(
				today.getTime() >= Date.parse(`${endOfLife}T00:00:00Z`)
					? `agent "${agent.name}": ${role} ${model} was retired on ${endOfLife}; its requests fail, switch to a current model`
					: `agent "${agent.name}": ${role} ${model} is deprecated and will be retired on ${endOfLife}`,
			);
		}
	}
	return warnings;
}

function canonicalJson(value: unknown): string {
	return JSON.stringify(value, (_key, v: unknown) =>
		v !== null && typeof v === "object" && !Array.isArray(v)
			? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1)))
			: v,
	);
}

/** Each issue a line, with where the file says it and whose agent it is (a path's [7] is the file's eighth). */
function invalid(source: string, issues: Issue[], data?: unknown, placed: Issue[] = issues): ConfigError {
	const lines = placed.map((i) => {
		const index = /^agents\[(\d+)\]/.exec(i.path)?.[1];
		const name = index === undefined ? undefined : (data as { agents?: { name?: unknown }[] } | undefined)?.agents?.[Number(index)]?.name;
		const where = [...(i.line !== undefined ? [`line ${i.line}:${i.column}`] : []), ...(typeof name === "string" ? [`agent ${name}`] : [])];
		return `  - ${i.path}: ${i.message}${where.length > 0 ? ` (${where.join(", ")})` : ""}`;
	});
	return new ConfigError(`${source} is invalid:\n${lines.join("\n")}`, issues);
}
