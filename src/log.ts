import { AsyncLocalStorage } from "node:async_hooks";
import { redactCut } from "./security/cut.ts";
import { redact, redactDeep } from "./security/redact.ts";
import { safeSlice } from "./shared/clip.ts";
import { C1_AND_BIDI } from "./shared/printable.ts";

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
/** A line's strings (and keys) in all: a list of 10,000 problems each under the field cap still made a megabyte line. */
const MAX_LINE_CHARS = 16_384;
/** An array's items, and an object's keys, kept in a line. */
const MAX_ITEMS = 100;

/**
 * A line's fields as they are logged: a string's head, cut outside a surrogate pair, under both the
 * field's cap and what is left of the line's; objects and arrays (a problem list, an error's cause)
 * walked inside, their items past MAX_ITEMS or past the line's budget dropped with a note; a value
 * with a toJSON (a Date, a URL) logged as JSON.stringify would, by it, its text redacted (redactDeep
 * leaves such objects whole); a reference back to an enclosing object is named, not followed, and a
 * BigInt, which JSON.stringify throws on, is written in digits: a log call never throws.
 */
function capped(value: unknown, budget: { left: number }, enclosing: WeakSet<object> = new WeakSet(), viaToJSON = false): unknown {
	if (!viaToJSON && value !== null && typeof value === "object" && typeof (value as { toJSON?: unknown }).toJSON === "function") {
		let json: unknown;
		try {
			json = (value as { toJSON: () => unknown }).toJSON();
		} catch {
			json = "[toJSON failed]";
		}
		return capped(typeof json === "string" ? redact(json) : json, budget, enclosing, true);
	}
	if (typeof value === "bigint") value = value.toString();
	if (typeof value === "string") {
		const room = Math.max(0, Math.min(MAX_FIELD_CHARS, budget.left));
		if (value.length <= room) {
			budget.left -= value.length;
			return value;
		}
		const head = safeSlice(value, room);
		budget.left -= head.length;
		return `${head}… [${value.length - head.length} more characters]`;
	}
	if (value === null || typeof value !== "object") {
		budget.left -= 1;
		return value;
	}
	if (enclosing.has(value)) return "[circular]";
	enclosing.add(value);
	let out: unknown;
	if (Array.isArray(value)) {
		const items: unknown[] = [];
		for (const [i, item] of value.entries()) {
			if (i >= MAX_ITEMS || budget.left <= 0) {
				items.push(`… [${value.length - i} more items]`);
				break;
			}
			items.push(capped(item, budget, enclosing));
		}
		out = items;
	} else {
		const entries = Object.entries(value);
		const kept: [string, unknown][] = [];
		for (const [i, [key, item]] of entries.entries()) {
			if (i >= MAX_ITEMS || budget.left <= 0) {
				kept.push(["…", `[${entries.length - i} more keys]`]);
				break;
			}
			budget.left -= key.length;
			kept.push([key, capped(item, budget, enclosing)]);
		}
		out = Object.fromEntries(kept);
	}
	enclosing.delete(value);
	return out;
}

const RANK: Record<Level, number> = { debug: 0, info: 1, warn: 2, error: 3 };
let threshold: Level = "info";
let configured = false;

/** Lines below `level` are not written from here on (tests, and configureLogLevel). */
export function setLogLevel(level: Level): void {
	threshold = level;
	configured = true;
}

/**
 * The LOG_LEVEL var, read once an isolate (the first entry point to run: a request, a tick, an
 * object's start): a var changes only with a deployment, which starts new isolates. Unset or blank
 * is info; a value that is no level is info too, said once as config.var_invalid.
 */
export function configureLogLevel(env: { LOG_LEVEL?: string }): void {
	if (configured) return;
	const { level, problem } = logLevelOf(env.LOG_LEVEL);
	setLogLevel(level);
	if (problem !== null) emit("error", "config.var_invalid", { variable: "LOG_LEVEL", error_message: problem, using: level });
}

/** The level a LOG_LEVEL value asks for (any case, blank is info), and what is wrong with one that names none. */
export function logLevelOf(value: string | undefined): { level: Level; problem: string | null } {
	const asked = (value ?? "").trim().toLowerCase();
	if (asked === "") return { level: "info", problem: null };
	if (Object.hasOwn(RANK, asked)) return { level: asked as Level, problem: null };
	return { level: "info", problem: `LOG_LEVEL ${JSON.stringify(value)} is not one of debug, info, warn, error` };
}

/** Fields every line logged within a request carries (its request_id), whoever logs it. */
const context = new AsyncLocalStorage<LogFields>();

/** Runs `fn` with `fields` added to every line it logs (a caller's own field of the same name wins). */
export function withLogContext<T>(fields: LogFields, fn: () => T): T {
	return context.run(fields, fn);
}

// JSON.stringify escapes C0 controls only: C1 controls, bidirectional controls (a path with U+202E
// shows the rest of its line reversed in a terminal or a log viewer) and the line separators go out
// as \u escapes too, which parse back to the same value.
const INVISIBLE = new RegExp(`[${C1_AND_BIDI}\\u2028\\u2029]`, "g");
const escapeInvisible = (line: string) => line.replace(INVISIBLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

function emit(level: Level, event: string, given: LogFields): void {
	if (RANK[level] < RANK[threshold]) return;
	const inherited = context.getStore();
	const fields = inherited ? { ...inherited, ...given } : given;
	const ts = new Date().toISOString();
	// Callers never log secrets on purpose; redaction catches the ones hiding in error messages (before
	// the cut, which could leave a credential's head no pattern knows). A field named like the line's
	// own keys does not overwrite them.
	// Every field the caller names is kept (its value cut as need be): job_id or agent must stay searchable.
	const own = { level, event, ts };
	const redacted = redactDeep(fields);
	const budget = { left: MAX_LINE_CHARS };
	const enclosing = new WeakSet<object>([redacted]);
	const kept = Object.fromEntries(Object.entries(redacted).map(([key, value]) => [key, capped(value, budget, enclosing)]));
	const line = escapeInvisible(JSON.stringify(Object.assign({ ...own }, kept, own)));
	if (level === "error") console.error(line);
	else if (level === "warn") console.warn(line);
	else if (level === "debug") console.debug(line);
	else console.log(line);
}

/**
 * A scheduler line's `minute`: the tick's minute (its scheduled time) as ISO, by which every line of
 * one tick, its shards' and its agents' claims are found together.
 */
export const minuteField = (ms: number): string => new Date(ms).toISOString();

/** Whether a line at `level` is written (a costly field can be left out of lines that are not). */
export const logs = (level: Level): boolean => RANK[level] >= RANK[threshold];

// The keys log.once has seen, by event: in memory only (a key may be a secret's value, never logged).
const said = new Map<string, Set<string>>();

export const log = {
	debug: (event: string, fields: LogFields = {}) => emit("debug", event, fields),
	info: (event: string, fields: LogFields = {}) => emit("info", event, fields),
	warn: (event: string, fields: LogFields = {}) => emit("warn", event, fields),
	error: (event: string, fields: LogFields = {}) => emit("error", event, fields),
	/**
	 * `event` once an isolate for each `key`: for a problem every request meets (a secret unset or
	 * malformed), which each request's own request.failed line already carries, and whose line per
	 * call would let anyone calling the route flood the log.
	 */
	once: (level: Level, event: string, key: string, fields: LogFields = {}) => {
		let keys = said.get(event);
		if (!keys) said.set(event, (keys = new Set()));
		if (keys.has(key)) return;
		keys.add(key);
		emit(level, event, fields);
	},
};

/** A thrown value that is no Error, in a line: an object as JSON (String() gives "[object Object]"), cut short. */
const MAX_THROWN_CHARS = 1000;
function describeThrown(value: unknown): string {
	let text: string;
	if (typeof value === "string") text = value;
	else if (value !== null && typeof value === "object") {
		try {
			text = JSON.stringify(value) ?? String(value);
		} catch {
			// A cycle or a BigInt inside: JSON cannot write it.
			text = "[unserializable object]";
		}
	} else text = String(value);
	if (text.length <= MAX_THROWN_CHARS) return text;
	const head = safeSlice(text, MAX_THROWN_CHARS);
	// Cut before the line is redacted: a credential cut through would be a piece no pattern knows.
	return `${redactCut(head)}… [${text.length - head.length} more characters]`;
}

/**
 * The parts of an unknown thrown value that are safe and useful in a log line; an error's cause (what
 * a wrapping error was underneath, such as the network failure behind a fetch error) by its name and message.
 */
export function errorFields(err: unknown): LogFields {
	if (!(err instanceof Error)) return { error_message: describeThrown(err) };
	const fields: LogFields = { error_name: err.name, error_message: err.message, stack: err.stack };
	if (err.cause instanceof Error) Object.assign(fields, { cause_name: err.cause.name, cause_message: err.cause.message });
	else if (err.cause !== undefined) fields.cause_message = describeThrown(err.cause);
	return fields;
}
