import stringWidth from "string-width";
import { visit, type Document } from "yaml";
import { printable } from "../src/shared/printable.ts";
import type { JobRecord, OutputLine, Paused } from "./types.ts";

export { printable };

/** The bidirectional controls of UNPRINTABLE: characters YAML takes raw in any scalar, and the yaml library writes so. */
export const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/**
 * A YAML document as text that is both safe on a terminal and read back by YAML as the same data.
 * The yaml library double-quotes every string holding a control character (C0, DEL, C1), escaping
 * the C0 ones but leaving DEL and C1 raw; a string holding a bidirectional control it writes in any
 * style. Here those are double-quoted too, and `printable` then escapes what is left raw: in a
 * double-quoted YAML string, its \x7f, \x9b and \u202e are YAML's own escapes for the same characters.
 */
export function printableYaml(doc: Document): string {
	visit(doc, {
		Scalar(_key, node) {
			if (typeof node.value === "string" && BIDI.test(node.value)) node.type = "QUOTE_DOUBLE";
		},
	});
	return printable(doc.toString({ lineWidth: 0 }));
}

/** `printable` on every string of a value (an API answer, keys included), to render it for a person. */
export function printableDeep<T>(value: T): T {
	if (typeof value === "string") return printable(value) as T;
	if (Array.isArray(value)) return value.map((v: unknown) => printableDeep(v)) as T;
	if (value !== null && typeof value === "object") {
		return Object.fromEntries(Object.entries(value).map(([k, v]) => [printable(k), printableDeep(v)])) as T;
	}
	return value;
}

/** Colour functions; all identity when colour is off, so callers never branch on it. */
export interface Paint {
	enabled: boolean;
	bold(s: string): string;
	dim(s: string): string;
	red(s: string): string;
	green(s: string): string;
	yellow(s: string): string;
	cyan(s: string): string;
	magenta(s: string): string;
}

const sgr = (open: number, close: number) => (s: string) => `\x1b[${open}m${s}\x1b[${close}m`;

export function paint(enabled: boolean): Paint {
	const id = (s: string) => s;
	return {
		enabled,
		bold: enabled ? sgr(1, 22) : id,
		dim: enabled ? sgr(2, 22) : id,
		red: enabled ? sgr(31, 39) : id,
		green: enabled ? sgr(32, 39) : id,
		yellow: enabled ? sgr(33, 39) : id,
		cyan: enabled ? sgr(36, 39) : id,
		magenta: enabled ? sgr(35, 39) : id,
	};
}

/**
 * Colour for a person at a terminal: not into a pipe or file, not against NO_COLOR (no-color.org),
 * not on a terminal that says it shows none (TERM=dumb). FORCE_COLOR (force-color.org) asks for it
 * anyway, into a pipe too (a CI log that renders it), and FORCE_COLOR=0 or false for none, as Node's
 * own streams and chalk read it; it wins over NO_COLOR, as in Node. The --no-color flag, given on
 * the command line, wins over both.
 */
export function wantsColor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv, flag: boolean): boolean {
	if (!flag) return false;
	const force = env.FORCE_COLOR;
	if (force !== undefined && force !== "") return force !== "0" && force.toLowerCase() !== "false";
	return stream.isTTY === true && (env.NO_COLOR === undefined || env.NO_COLOR === "") && env.TERM !== "dumb";
}

export function statusStyle(p: Paint, status: string): (s: string) => string {
	switch (status) {
		case "completed":
		case "delivered":
		case "resolved":
			return p.green;
		case "failed":
		case "indeterminate":
		case "alerted":
		case "detected":
			return p.red;
		case "cancelled":
		case "skipped":
		case "approval_pending":
			return p.yellow;
		case "running":
		case "claimed":
			return p.cyan;
		default:
			return (s) => s;
	}
}

/**
 * The terminal columns `text` takes: two for a CJK character or an emoji, none for an accent or a
 * zero-width joiner, one for most else. Its UTF-16 length is none of these: "東京" is 2 units and 4
 * columns, a family emoji 11 units and 2 columns. For text without escape codes (drover's colours
 * are added after measuring).
 */
export function columnsOf(text: string): number {
	return /^[\x20-\x7e]*$/.test(text) ? text.length : stringWidth(text);
}

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });
/** The escapes `printable` writes: a cut inside one would show `\x1` and read as something else. */
const ESCAPE = /\\x[0-9a-f]{2}|\\u[0-9a-f]{4}/g;

/** `text` in the pieces a cut must keep whole: `printable`'s escapes, and what a reader sees as one character. */
function* uncuttable(text: string): Generator<string> {
	let at = 0;
	for (const escape of text.matchAll(ESCAPE)) {
		if (escape.index > at) for (const { segment } of graphemes.segment(text.slice(at, escape.index))) yield segment;
		yield escape[0];
		at = escape.index + escape[0].length;
	}
	if (at < text.length) for (const { segment } of graphemes.segment(text.slice(at))) yield segment;
}

/**
 * `text` (printable already) if it fits in `max` columns, else its head in `max` - 1 and "…": never
 * half an emoji (a lone surrogate prints as U+FFFD), a letter without its accent, or part of an escape.
 */
function fitColumns(text: string, max: number): string {
	if (max <= 0) return "";
	if (text.length <= max && /^[\x20-\x7e]*$/.test(text)) return text;
	let used = 0;
	let end = 0;
	let kept = 0; // where the head that leaves a column for "…" ends
	for (const piece of uncuttable(text)) {
		used += columnsOf(piece);
		if (used > max) return `${text.slice(0, kept)}…`;
		end += piece.length;
		if (used <= max - 1) kept = end;
	}
	return text;
}

/**
 * One printable line, at most `max` terminal columns: newlines and runs of whitespace (\r, \v and
 * \f too) become single spaces, other control characters escapes (`printable`).
 */
export function truncate(s: string, max: number): string {
	if (max <= 0) return "";
	return fitColumns(printable(s.replace(/\s+/g, " ").trim()), max);
}

function span(seconds: number): string {
	if (seconds < 60) return `${seconds}s`;
	const minutes = Math.floor(seconds / 60);
	if (minutes < 60) return `${minutes}m`;
	const hours = Math.floor(minutes / 60);
	if (hours < 48) return `${hours}h`;
	return `${Math.floor(hours / 24)}d`;
}

/** "3m ago", "in 12m", "now"; "-" for no time. */
export function relTime(iso: string | null | undefined, now = Date.now()): string {
	if (!iso) return "-";
	const at = Date.parse(iso);
	if (Number.isNaN(at)) return iso;
	const seconds = Math.round((now - at) / 1000);
	if (Math.abs(seconds) < 1) return "now";
	return seconds > 0 ? `${span(seconds)} ago` : `in ${span(-seconds)}`;
}

/** "850ms", "12.3s", "4m 05s", "2h 03m". */
export function duration(seconds: number | null | undefined): string {
	if (seconds === null || seconds === undefined) return "-";
	// Each unit is chosen by the figure it rounds to: 0.9996 s is "1.0s", not "1000ms"; 59.96 s "1m 00s", not "60.0s".
	const ms = Math.round(seconds * 1000);
	if (ms < 1000) return `${ms}ms`;
	const tenths = Math.round(seconds * 10) / 10;
	if (tenths < 60) return `${tenths.toFixed(1)}s`;
	const whole = Math.round(seconds);
	const m = Math.floor(whole / 60);
	if (m < 60) return `${m}m ${String(whole % 60).padStart(2, "0")}s`;
	return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, "0")}m`;
}

/** An absolute time a person can read next to its relative form: "2026-11-30 08:39:26Z". */
export function stamp(iso: string | null | undefined): string {
	if (!iso) return "-";
	const d = new Date(iso);
	return Number.isNaN(d.getTime()) ? iso : `${d.toISOString().slice(0, 19).replace("T", " ")}Z`;
}

export function when(iso: string | null | undefined, now = Date.now()): string {
	return iso ? `${stamp(iso)} (${relTime(iso, now)})` : "-";
}

export interface Column<T> {
	header: string;
	value(row: T): string;
	/** Applied after padding, so escape codes never count toward the width. */
	style?(row: T): (s: string) => string;
	/**
	 * How the column gives way on a terminal narrower than the table, its cells cut with "…":
	 * "text" (an answer, an error, a reason) first, then "name" (an agent's, a schedule's), then
	 * "note" (what follows a status or a time: `keep` says the head a cut leaves whole). Unset: never
	 * cut (an id, a status, a time, a count: what a user copies or compares).
	 */
	shrink?: "text" | "name" | "note";
	/** The head of a cell a cut keeps whole (a status before its note): the column is never cut narrower. */
	keep?(row: T): string;
	/**
	 * Left out on a terminal too narrow for the table even with every column above cut to its least
	 * (`drover <thing> --json` still has it): the lowest first.
	 */
	optional?: number;
	/** The most terminal columns a cell shows, terminal or not. */
	max?: number;
}

/**
 * The order in which columns are cut, each to the least given (or to its header's or `keep`'s width,
 * when wider): free text to a readable 24 columns first, names next, then free text on to 12, and
 * the notes after statuses and times; last, when that is not enough, free text down to its header.
 */
const PHASES = [
	["text", 24],
	["name", 8],
	["text", 12],
	["note", 1],
	["text", 0],
] as const;
/** How far each is cut before an optional column is left out rather (free text keeps 12 columns). */
const BEFORE_LEAVING_OUT = { text: 12, name: 8, note: 1 } as const;

/**
 * The columns a table shows on a terminal `width` columns wide, and the width of each: its natural
 * one when the table fits; else optional columns left out (only while cutting alone cannot fit it),
 * then the shrinking columns cut phase by phase (PHASES), the widest first. A table whose uncut
 * columns are wider than the terminal stays wider: ids, statuses and times are never cut.
 */
function fit<T>(rows: readonly T[], columns: readonly Column<T>[], cells: readonly string[][], natural: readonly number[], width: number): { shown: number[]; widths: number[] } {
	const widths = [...natural];
	// The least a column is cut to: its header, its kept heads (and a column for "…" after a longer cell).
	const floor = columns.map((c, i) => {
		const keep = c.keep;
		const kept = keep === undefined ? 0 : Math.max(0, ...rows.map((row, r) => {
			const head = columnsOf(truncate(keep(row), 10_000));
			return columnsOf(cells[r]![i]!) > head ? head + 1 : head;
		}));
		return Math.max(columnsOf(c.header), kept);
	});
	const least = (i: number, phaseLeast: number) => Math.min(natural[i]!, Math.max(floor[i]!, phaseLeast));
	const total = (ws: readonly number[], shown: readonly number[]) => shown.reduce((n, i) => n + ws[i]!, 0) + 2 * (shown.length - 1);
	const cutMost = columns.map((c, i) => (c.shrink === undefined ? natural[i]! : least(i, BEFORE_LEAVING_OUT[c.shrink])));
	let shown = columns.map((_, i) => i);
	const optional = shown.filter((i) => columns[i]!.optional !== undefined).sort((a, b) => columns[a]!.optional! - columns[b]!.optional!);
	for (const drop of optional) {
		if (total(cutMost, shown) <= width) break;
		shown = shown.filter((i) => i !== drop);
	}
	for (const [tier, phaseLeast] of PHASES) {
		const cuttable = shown.filter((i) => columns[i]!.shrink === tier);
		for (let excess = total(widths, shown) - width; excess > 0; excess--) {
			const wider = cuttable.filter((i) => widths[i]! > least(i, phaseLeast));
			if (wider.length === 0) break;
			widths[wider.reduce((a, b) => (widths[b]! > widths[a]! ? b : a))]!--;
		}
	}
	return { shown, widths };
}

/**
 * An aligned table, two spaces between columns, measured in terminal columns (a CJK summary is
 * twice as wide as its length). On a terminal (`width` known) it is fitted to the width (`fit`), so
 * rows never wrap; into a pipe or a file (no `width`) every column is shown whole, as scripts read it.
 */
export function table<T>(rows: readonly T[], columns: readonly Column<T>[], p: Paint, width?: number): string {
	const cells = rows.map((row) => columns.map((c) => truncate(c.value(row), c.max ?? 10_000)));
	const natural = columns.map((c, i) => Math.max(columnsOf(c.header), ...cells.map((r) => columnsOf(r[i]!))));
	const { shown, widths } = width === undefined ? { shown: columns.map((_, i) => i), widths: natural } : fit(rows, columns, cells, natural, width);
	for (const i of shown) if (widths[i]! < natural[i]!) for (const r of cells) r[i] = fitColumns(r[i]!, widths[i]!);
	const last = shown.at(-1);
	const pad = (v: string, w: number) => v + " ".repeat(Math.max(0, w - columnsOf(v)));
	const line = (values: readonly string[], styles: readonly ((s: string) => string)[]) =>
		shown
			.map((i) => styles[i]!(i === last ? values[i]! : pad(values[i]!, widths[i]!)))
			.join("  ")
			.trimEnd();
	const header = line(
		columns.map((c) => c.header),
		columns.map(() => p.bold),
	);
	const body = rows.map((row, r) =>
		line(
			cells[r]!,
			columns.map((c) => c.style?.(row) ?? ((s: string) => s)),
		),
	);
	return [header, ...body].join("\n");
}

/**
 * A field's value, or one made to fit the columns its line leaves it (`room`), which depend on the
 * widest key shown: known only here, once the fields without a value are left out.
 */
export type FieldValue = string | null | ((room: number) => string);

/**
 * `key  value` lines with the keys aligned; entries with a null value are left out. `width`: the
 * terminal's columns, which a value given as a function is fitted to (undefined: no terminal, 120).
 */
export function fields(entries: readonly (readonly [string, FieldValue])[], p: Paint, width?: number): string {
	const shown = entries.filter((e): e is readonly [string, Exclude<FieldValue, null>] => e[1] !== null);
	const keys = Math.max(...shown.map(([k]) => k.length));
	// Never under one column: "…" says there was something there.
	const room = Math.max(1, (width ?? 120) - keys - 2);
	return shown.map(([k, v]) => `${p.dim(k.padEnd(keys))}  ${typeof v === "function" ? v(room) : v}`).join("\n");
}

/**
 * One output line for a person: system dim, assistant text as is, tool calls and results with
 * arrows, errors red. Returns null for a line with nothing to show (an assistant turn that only
 * called a tool has empty text).
 */
export function renderLine(raw: string, p: Paint, width = 160): string | null {
	let parsed: OutputLine | null;
	try {
		parsed = JSON.parse(raw) as OutputLine | null;
	} catch {
		return p.dim(printable(raw));
	}
	if (parsed === null || typeof parsed !== "object") return p.dim(printable(raw));
	// Every field is the model's, a tool's or a webhook's text: printable before any of it is styled.
	// A tool call's input (and an approval's edited one) is shown as JSON, which escapes C0 controls
	// its own way ("\u001b"); truncate makes the rest printable. (Made printable first, its "\x1b"
	// would show as "\\x1b".)
	const line = { ...printableDeep(parsed), input: parsed.input, tool_input: parsed.tool_input };
	const shown = renderParsed(line, printable(raw), p, width);
	// The line's text was cut to fit a storage row: what is shown is not all of it.
	const cut = line.truncated;
	if (typeof cut !== "object" || cut === null) return shown;
	const bytes = (cut as { bytes?: unknown }).bytes;
	const note = p.dim(`[cut to fit: the line was ${typeof bytes === "number" ? bytes.toLocaleString("en-US") : "?"} bytes]`);
	return shown === null ? note : `${shown} ${note}`;
}

function renderParsed(line: OutputLine, raw: string, p: Paint, width: number): string | null {
	switch (line.type) {
		case "system": {
			const extra = [line.status, line.exit_reason].filter((x): x is string => typeof x === "string" && x !== "");
			// An approval with edited input: the input that was run in place of the model's (its tool_use line's).
			const edited = line.tool_input === undefined ? "" : truncate(JSON.stringify(line.tool_input), width);
			const content = [line.content ?? "", edited, extra.length ? `(${extra.join(", ")})` : ""].filter(Boolean).join(" ");
			return p.dim(`[system:${line.subtype ?? "?"}]${content ? ` ${content}` : ""}`);
		}
		case "assistant":
			return line.content ? line.content : null;
		case "tool_use":
			return `${p.cyan("→")} ${p.bold(line.tool_name ?? "?")} ${truncate(JSON.stringify(line.input ?? null), width)}`;
		case "tool_result": {
			const ok = line.success === true;
			const text = (ok ? line.result : (line.error ?? line.result)) ?? "";
			return `${ok ? p.green("←") : p.red("←")} ${ok ? "ok" : p.red("error")} ${truncate(text, width)}`;
		}
		case "error":
			return p.red(`error${line.code ? ` [${line.code}]` : ""}: ${line.message ?? raw}`);
		default:
			return p.dim(raw);
	}
}

/** One word for a POSIX shell: as it is when nothing in it is special, else in single quotes. */
export function shellWord(word: string): string {
	return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * A pause's reason as a person should read it. drover's own pauses (by "auto") store it as
 * "auto: secret X is not set"; wherever the CLI already says "automatically", the prefix would only
 * repeat it ("by auto: auto: …"), so it is dropped.
 */
export function pauseReason(paused: Paused): string | null {
	return paused.by === "auto" && paused.reason ? paused.reason.replace(/^auto:\s*/, "") : paused.reason;
}

/** Since when and why an agent is paused: "paused 2m ago by root: maintenance", "paused 2m ago automatically: secret X is not set". */
export function pausedText(paused: Paused, now = Date.now()): string {
	const reason = pauseReason(paused);
	const by = paused.by === "auto" ? " automatically" : paused.by ? ` by ${paused.by}` : "";
	return `paused ${relTime(paused.at, now)}${by}${reason ? `: ${reason}` : ""}`;
}

/**
 * Why a cancelled job was cancelled (who cancelled it, or that its agent's definition changed while
 * it waited…): the record keeps it only as the reason of its move to cancelled. null otherwise.
 */
export function cancelReason(job: Pick<JobRecord, "status"> & { transitions?: JobRecord["transitions"] }): string | null {
	if (job.status !== "cancelled") return null;
	const reason = job.transitions?.findLast((t) => t.to === "cancelled")?.reason;
	return reason ? reason : null;
}

/** A job's exit reason beside its status, where it adds something: not "success", nor a repeat ("cancelled (cancelled)"). */
export function exitNote(job: { status: string; exit_reason: string | null }): string {
	return job.exit_reason && job.exit_reason !== "success" && job.exit_reason !== job.status ? ` (${job.exit_reason})` : "";
}
