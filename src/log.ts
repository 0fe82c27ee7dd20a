import { redactDeep } from "./security/redact.ts";
import { safeSlice } from "./shared/clip.ts";

/**
 * Structured logs: one JSON object per line, which Workers observability indexes by field.
 * Callers pass ids (agent, job_id), never credentials or request bodies.
 */
type Level = "debug" | "info" | "warn" | "error";
export type LogFields = Record<string, unknown>;

/**
 * Workers Logs keeps 256 KB of lines an invocation and drops the rest: a tick where many agents fail,
 * each logging a long message and stack, must not push the later lines out.
 */
const MAX_FIELD_CHARS = 4096;

/**
 * A string field's head, cut outside a surrogate pair; objects and arrays (a problem list, an error's
 * cause) are cut inside, and a reference back to an enclosing one is named, not followed: a log call
 * never throws.
 */
function capped(value: unknown, enclosing: WeakSet<object> = new WeakSet()): unknown {
	if (typeof value === "string") {
		if (value.length <= MAX_FIELD_CHARS) return value;
		const head = safeSlice(value, MAX_FIELD_CHARS);
		return `${head}… [${value.length - head.length} more characters]`;
	}
	if (value === null || typeof value !== "object") return value;
	if (enclosing.has(value)) return "[circular]";
	enclosing.add(value);
	const out = Array.isArray(value) ? value.map((v) => capped(v, enclosing)) : Object.fromEntries(Object.entries(value).map(([k, v]) => [k, capped(v, enclosing)]));
	enclosing.delete(value);
	return out;
}

function emit(level: Level, event: string, fields: LogFields): void {
	const ts = new Date().toISOString();
	// Callers never log secrets on purpose; redaction catches the ones hiding in error messages (before
	// the cut, which could leave a credential's head no pattern knows). A field named like the line's
	// own keys does not overwrite them.
	const own = { level, event, ts };
	const line = JSON.stringify(Object.assign({ ...own }, capped(redactDeep(fields)) as LogFields, own));
	if (level === "error") console.error(line);
	else if (level === "warn") console.warn(line);
	else console.log(line);
}

export const log = {
	debug: (event: string, fields: LogFields = {}) => emit("debug", event, fields),
	info: (event: string, fields: LogFields = {}) => emit("info", event, fields),
	warn: (event: string, fields: LogFields = {}) => emit("warn", event, fields),
	error: (event: string, fields: LogFields = {}) => emit("error", event, fields),
};

/** The parts of an unknown thrown value that are safe and useful in a log line. */
export function errorFields(err: unknown): LogFields {
	if (err instanceof Error) return { error_name: err.name, error_message: err.message, stack: err.stack };
	return { error_message: String(err) };
}
