import { redactDeep } from "./security/redact.ts";

/**
 * Structured logs: one JSON object per line, which Workers observability indexes by field.
 * Callers pass ids (agent, job_id), never credentials or request bodies.
 */
type Level = "debug" | "info" | "warn" | "error";
export type LogFields = Record<string, unknown>;

function emit(level: Level, event: string, fields: LogFields): void {
	// Callers never log secrets on purpose; redaction catches the ones hiding in error messages.
	const line = JSON.stringify({ level, event, ts: new Date().toISOString(), ...redactDeep(fields) });
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
