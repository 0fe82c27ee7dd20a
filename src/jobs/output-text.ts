import { printable } from "../shared/printable.ts";
import type { OutputLineView } from "../shared/output-line.ts";

/**
 * One JSONL output line as herdctl's plain-text `output.log` has it, for reading with less and
 * grep: the line's time, its type, then its text whole (a terminal view cuts long tool calls; a log
 * file keeps them). An entry's further lines are indented, so every entry starts with its time.
 * Null for a line with nothing to say (an assistant turn that only called a tool has empty text).
 * Everything is made printable: a log is read on a terminal, and its text is the model's and tools'.
 */
export function outputLogEntry(body: string): string | null {
	let line: OutputLineView | null;
	try {
		line = JSON.parse(body) as OutputLineView | null;
	} catch {
		return printable(body);
	}
	if (line === null || typeof line !== "object" || Array.isArray(line)) return printable(body);
	const text = entryText(line);
	if (text === null) return null;
	const at = typeof line.timestamp === "string" ? line.timestamp : "-";
	const cut = line.truncated && typeof line.truncated.bytes === "number" ? ` [cut to fit: the line was ${line.truncated.bytes} bytes]` : "";
	return printable(`${at} ${text}${cut}`).replace(/\n/g, "\n    ");
}

function entryText(line: OutputLineView): string | null {
	const str = (v: unknown): string => (typeof v === "string" ? v : "");
	switch (line.type) {
		case "system": {
			const extra = [line.status, line.exit_reason].filter((x): x is string => typeof x === "string" && x !== "");
			const edited = line.tool_input === undefined ? "" : ` input ${JSON.stringify(line.tool_input)}`;
			return `system${line.subtype ? `:${str(line.subtype)}` : ""} ${str(line.content)}${edited}${extra.length ? ` (${extra.join(", ")})` : ""}`.trimEnd();
		}
		case "assistant":
			return line.content ? `assistant ${str(line.content)}` : null;
		case "tool_use":
			return `tool_use ${str(line.tool_name) || "?"} ${str(line.tool_use_id)} ${JSON.stringify(line.input ?? null)}`;
		case "tool_result": {
			const ok = line.success === true;
			return `tool_result ${str(line.tool_use_id)} ${ok ? "ok" : "error"} ${ok ? str(line.result) : str(line.error) || str(line.result)}`.trimEnd();
		}
		case "error":
			return `error${line.code ? ` [${str(line.code)}]` : ""} ${str(line.message)}`.trimEnd();
		default:
			return `${str(line.type) || "?"} ${JSON.stringify(line)}`;
	}
}
