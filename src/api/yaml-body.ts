import type { z } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { parseYaml12, positionIn, unreadable } from "../config/yaml.ts";
import { BadRequestError, UnsupportedMediaTypeError } from "../errors.ts";
import { duplicateJsonKey } from "../shared/json-duplicate-keys.ts";
import { issuesOf, type Issue } from "../shared/zod-issues.ts";
import type { AppEnv } from "./context.ts";

/** RFC 9512's media type, and the names YAML went by before it was registered. */
const YAML_TYPES = new Set(["application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml"]);
const JSON_TYPE = /^application\/([\w.-]+\+)?json$/i;

const essence = (contentType: string) => contentType.split(";")[0]!.trim().toLowerCase();

const isYamlType = (contentType: string | undefined) => contentType !== undefined && YAML_TYPES.has(essence(contentType));

/**
 * A route whose body may be YAML (an agent's definition, as fleet.yaml and `drover definition`
 * write it) reads it as fleet.yaml is read (YAML 1.2, no merge keys) and validates it here, so each
 * issue says the line it is on; the route then gets the JSON it means, as if it had been sent so.
 * A body of neither type is a 415 naming both.
 */
export function yamlBody(schema: z.ZodType): MiddlewareHandler<AppEnv> {
	return async (c, next) => {
		const type = c.req.header("content-type");
		const text = await c.req.text();
		if (type === undefined ? text !== "" : !JSON_TYPE.test(essence(type)) && !isYamlType(type)) throw UnsupportedMediaTypeError.jsonOrYamlRequired(type);
		if (!isYamlType(type)) {
			const value = jsonOf(text);
			if (value !== undefined) {
				refuseDuplicateKeys(text);
				refuseFleet(value);
			}
			return next();
		}
		const parsed = parseYaml12(text, { uniqueKeys: true });
		const { doc } = parsed;
		const faults = unreadable(parsed);
		if (faults.length > 0) {
			const issues = faults.map(({ line, col, message }) => ({ path: "body", message, ...(line !== undefined ? { line, column: col } : {}) }));
			throw new BadRequestError(`invalid body: not valid YAML: ${lines(issues)}`, { issues });
		}
		let value: unknown;
		try {
			value = doc.toJS();
		} catch (error) {
			// An alias bomb, past the library's count of aliases a document may expand.
			const message = error instanceof Error ? error.message : String(error);
			throw new BadRequestError(`invalid body: not valid YAML: ${message}`, { issues: [{ path: "body", message }] });
		}
		refuseFleet(value);
		const result = schema.safeParse(value);
		if (!result.success) {
			const issues = issuesOf(result.error, positionIn(parsed));
			throw new BadRequestError(`invalid body: ${lines(issues)}`, { issues });
		}
		const headers = new Headers(c.req.raw.headers);
		headers.set("content-type", "application/json");
		const json = JSON.stringify(value);
		// Handed on as the JSON it means: the route's validator reads the request's type and Hono's cached body.
		c.req.raw = new Request(c.req.raw.url, { method: c.req.method, headers, body: json, signal: c.req.raw.signal });
		// bodyCache holds the promises Hono's body readers return (its type says the values).
		c.req.bodyCache = { json: Promise.resolve(value), text: Promise.resolve(json) } as unknown as typeof c.req.bodyCache;
		await next();
	};
}

/** The body's JSON value, or undefined where it is none (the route's validator says so). */
function jsonOf(text: string): unknown {
	try {
		return JSON.parse(text) as unknown;
	} catch {
		return undefined;
	}
}

/** A key written twice, which YAML refuses (uniqueKeys) and JSON.parse would take the last of. */
function refuseDuplicateKeys(text: string): void {
	const twice = duplicateJsonKey(text);
	if (!twice) return;
	const message = `key "${twice.key}" is written twice in one object (JSON would keep the last without a word); write it once`;
	throw new BadRequestError(`invalid body: ${twice.path}: ${message}`, { issues: [{ path: twice.path, message }] });
}

/**
 * A whole fleet file (fleet.yaml's `agents:` list) sent where one agent's definition goes: said as
 * such, where the schema would list `agents` and `version` as unknown keys and the name as missing.
 */
function refuseFleet(value: unknown): void {
	if (value === null || typeof value !== "object" || Array.isArray(value) || !("agents" in value) || "name" in value) return;
	const message = "this is a fleet file (its agents under agents:), not one agent's definition: send each agent on its own (an item of its agents list), or run `drover apply <file>`, which does";
	throw new BadRequestError(`invalid body: ${message}`, { issues: [{ path: "agents", message }] });
}

const lines = (issues: (Issue & { line?: number; column?: number })[]) =>
	issues.map((i) => `${i.line !== undefined ? `line ${i.line}:${i.column}: ` : ""}${i.path === "body" ? "" : `${i.path}: `}${i.message}`).join("; ");
