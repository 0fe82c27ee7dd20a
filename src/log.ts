import { redactDeep } from "./security/redact.ts";

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

function capped(fields: LogFields): LogFields {
	const out: LogFields = {};
	for (const [key, value] of Object.entries(fields)) {
		out[key] = typeof value === "string" && value.length > MAX_FIELD_CHARS ? `${value.slice(0, MAX_FIELD_CHARS)}… [${value.length - MAX_FIELD_CHARS} more characters]` : value;
	}
	return out;
}

function emit(level: Level, event: string, fields: LogFields): void {
	const ts = new Date().toISOString();
	// Callers never log secrets on purpose; redaction catches the ones hiding in error messages (before
	// the cut, which could leave a credential's head no pattern knows). A field named like the line's
	// own keys does not overwrite them.
	const own = { level, event, ts };
	const line = JSON.stringify(Object.assign({ ...own }, capped(redactDeep(fields)), own));
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
