// What answers a request: a scripted step, checked and tagged, or the demo behaviour, made into a message.
import { type EmulatorErrorStatus, type JsonSchema, type ResponseBlock, SCRIPTED_STOP_REASONS, type ScriptedStopReason, type StopReason, type WireContentBlock, type WireMessage, type WireTool } from "./wire.ts";
import { signNew } from "./thinking.ts";
import type { ValidRequest } from "./validate.ts";
import { headOf, isObject, newId, textOf } from "./text.ts";

/** A step tagged by its kind, so the code that plays it needs no key-presence checks. */
export type Step =
	| { kind: "text"; text: string; thinking: string | undefined }
	| { kind: "tool_use"; calls: { name: string; input: unknown; id: string | undefined }[]; text: string | undefined; thinking: string | undefined }
	| { kind: "error"; status: EmulatorErrorStatus; retryAfter: number | null | undefined; message: string | undefined; errorCode: string | undefined; afterEvents: number | undefined }
	| { kind: "delay"; ms: number; then: Step | null }
	| { kind: "drop"; after: number }
	| { kind: "malformed" }
	| { kind: "hang" }
	| { kind: "stop_reason"; stopReason: ScriptedStopReason; text: string | undefined; thinking: string | undefined }
	| { kind: "max_tokens_stop"; text: string | undefined; toolUse: { name: string; input: unknown; id: string | undefined } | undefined };

/** Validates a step (it may come over HTTP as JSON) and tags it; throws TypeError naming the bad field. */
export function toStep(value: unknown, at: string): Step {
	const bad = (why: string): never => {
		throw new TypeError(`${at}: ${why}`);
	};
	const count = (v: unknown, what: string): number => (Number.isInteger(v) && (v as number) >= 0 ? (v as number) : bad(`${what} must be an integer ≥ 0`));
	if (!isObject(value)) return bad("a step must be an object");
	const toolUse = (t: unknown): { name: string; input: unknown; id: string | undefined } => {
		if (!isObject(t) || typeof t.name !== "string" || t.name === "") return bad("tool_use needs a name");
		if (t.id !== undefined && typeof t.id !== "string") bad("tool_use.id must be a string");
		return { name: t.name, input: t.input ?? {}, id: t.id as string | undefined };
	};
	const optionalText = (): string | undefined => {
		if (value.text !== undefined && typeof value.text !== "string") bad("text must be a string");
		return value.text as string | undefined;
	};
	const thinking = (): string | undefined => {
		// "" is a thinking block whose text is omitted (the 5.5 models' default display), signed all the same.
		if (value.thinking !== undefined && typeof value.thinking !== "string") bad("thinking must be a string");
		return value.thinking as string | undefined;
	};
	if ("max_tokens_stop" in value) {
		if (value.max_tokens_stop !== true) bad("max_tokens_stop must be true");
		const text = optionalText();
		return { kind: "max_tokens_stop", text, toolUse: value.tool_use === undefined ? undefined : toolUse(value.tool_use) };
	}
	if ("tool_use" in value) {
		const given = value.tool_use;
		if (Array.isArray(given) && given.length === 0) bad("tool_use needs at least one call");
		const calls = Array.isArray(given) ? given.map(toolUse) : [toolUse(given)];
		return { kind: "tool_use", calls, text: optionalText(), thinking: thinking() };
	}
	if ("stop_reason" in value) {
		const reason = value.stop_reason;
		if (!SCRIPTED_STOP_REASONS.includes(reason as ScriptedStopReason)) {
			bad(`stop_reason must be one of ${SCRIPTED_STOP_REASONS.join(", ")} (end_turn, tool_use and max_tokens come from text, tool_use and max_tokens_stop steps)`);
		}
		return { kind: "stop_reason", stopReason: reason as ScriptedStopReason, text: optionalText(), thinking: thinking() };
	}
	if ("text" in value) {
		if (typeof value.text !== "string") bad("text must be a string");
		return { kind: "text", text: value.text as string, thinking: thinking() };
	}
	if ("error" in value) {
		const status = value.error;
		if (!(status === 400 || status === 401 || status === 404 || status === 429 || status === 500 || status === 529)) return bad("error must be one of 400, 401, 404, 429, 500, 529");
		if (value.retry_after !== undefined && value.retry_after !== null && !(typeof value.retry_after === "number" && value.retry_after >= 0)) bad("retry_after must be seconds ≥ 0, or null for none");
		if (value.message !== undefined && typeof value.message !== "string") bad("message must be a string");
		if (value.error_code !== undefined && !(typeof value.error_code === "string" && value.error_code !== "")) bad("error_code must be a non-empty string");
		return {
			kind: "error",
			status,
			retryAfter: value.retry_after as number | null | undefined,
			message: value.message as string | undefined,
			errorCode: value.error_code as string | undefined,
			afterEvents: value.after_events === undefined ? undefined : count(value.after_events, "after_events"),
		};
	}
	if ("delay_ms" in value) {
		if (!(typeof value.delay_ms === "number" && value.delay_ms >= 0)) bad("delay_ms must be a number ≥ 0");
		return { kind: "delay", ms: value.delay_ms as number, then: value.then === undefined ? null : toStep(value.then, `${at}.then`) };
	}
	if ("drop_after_events" in value) return { kind: "drop", after: count(value.drop_after_events, "drop_after_events") };
	if ("malformed" in value) return value.malformed === true ? { kind: "malformed" } : bad("malformed must be true");
	if ("hang" in value) return value.hang === true ? { kind: "hang" } : bad("hang must be true");
	return bad("unknown step; expected one of text, tool_use, stop_reason, max_tokens_stop, error, delay_ms, drop_after_events, malformed, hang");
}

/** An answer's content and stop reason; `cutInput` is the JSON a stream sends for a tool_use block cut at max_tokens. */
interface Composed {
	content: ResponseBlock[];
	stopReason: StopReason;
	cutInput?: string;
}

/** The content of the answer: the scripted step's, or the demo behaviour's; a thinking block first if it scripts one. */
export function compose(step: Step | null, req: ValidRequest): Composed {
	const thinking = step?.kind === "text" || step?.kind === "tool_use" || step?.kind === "stop_reason" ? step.thinking : undefined;
	if (thinking === undefined) return composeAnswer(step, req);
	// Thinking counts against max_tokens (about 4 characters a token), as the real API counts it: what
	// it leaves is the answer's, and thinking that takes it all ends the answer there, cut.
	const spent = Math.ceil([...thinking].length / 4);
	const left = req.max_tokens - spent;
	if (left <= 0) {
		const cut = [...thinking].slice(0, req.max_tokens * 4).join("");
		return { content: [{ type: "thinking", thinking: cut, signature: signNew(req, cut) }], stopReason: "max_tokens" };
	}
	const composed = composeAnswer(step, { ...req, max_tokens: left });
	composed.content.unshift({ type: "thinking", thinking, signature: signNew(req, thinking) });
	return composed;
}

function composeAnswer(step: Step | null, req: ValidRequest): Composed {
	switch (step?.kind) {
		case "tool_use": {
			const content: ResponseBlock[] = [];
			if (step.text) content.push(textBlock(step.text));
			for (const call of step.calls) content.push(toolUseBlock(call.name, call.input, call.id));
			return { content, stopReason: "tool_use" };
		}
		case "stop_reason":
			return { content: step.text ? [textBlock(step.text)] : [], stopReason: step.stopReason };
		case "max_tokens_stop": {
			const content: ResponseBlock[] = step.text ? [textBlock(step.text)] : [];
			if (!step.toolUse) return { content, stopReason: "max_tokens" };
			// The input never finished, so a non-streaming answer has none; a stream shows the half that was written.
			content.push(toolUseBlock(step.toolUse.name, {}, step.toolUse.id));
			const points = [...JSON.stringify(step.toolUse.input)];
			const cutInput = points.slice(0, Math.max(1, Math.floor(points.length / 2))).join("");
			return { content, stopReason: "max_tokens", cutInput };
		}
		case "text":
			return finalText(step.text, req.max_tokens);
		default:
			// Faults (drop, malformed, a mid-stream error) break the demo answer partway.
			return demo(req);
	}
}

// ── Demo behaviour ─────────────────────────────────────────────────────────────────────────────

function demo(req: ValidRequest): Composed {
	const tool = (req.tools ?? []).find((t) => isObject(t.input_schema));
	const hasResult = req.messages.some((m) => Array.isArray(m.content) && m.content.some((b) => b.type === "tool_result"));
	if (tool && !hasResult) {
		return { content: [toolUseBlock(tool.name, demoInput(tool))], stopReason: "tool_use" };
	}
	// Cut between characters: half an emoji would be a lone surrogate in the reply, which a caller then stores or sends on.
	const quote = headOf(lastInput(req.messages), 200);
	return finalText(`Emulated reply from the local Messages API emulator (no model was called). Last input: "${quote}"`, req.max_tokens);
}

function demoInput(tool: WireTool): Record<string, unknown> {
	if (tool.name === "http_fetch") {
		const host = /\b((?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,})\b/i.exec(tool.description ?? "")?.[1]?.toLowerCase();
		return { url: `https://${host ?? "example.com"}/`, method: "GET" };
	}
	const schema = tool.input_schema ?? {};
	const input: Record<string, unknown> = {};
	for (const name of schema.required ?? []) input[name] = demoValue(name, schema.properties?.[name] ?? {});
	return input;
}

function demoValue(name: string, schema: JsonSchema): unknown {
	if (schema.default !== undefined) return schema.default;
	if (schema.enum && schema.enum.length > 0) return schema.enum[0];
	const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
	switch (type) {
		case "number":
		case "integer":
			return schema.minimum ?? 1;
		case "boolean":
			return true;
		case "array":
			return [];
		case "object": {
			const nested: Record<string, unknown> = {};
			for (const key of schema.required ?? []) nested[key] = demoValue(key, schema.properties?.[key] ?? {});
			return nested;
		}
		default: {
			const n = name.toLowerCase();
			if (schema.format === "uri" || n.includes("url")) return "https://example.com/";
			if (schema.format === "email" || n.includes("email")) return "demo@example.com";
			if (n.includes("title") || n.includes("subject") || n.includes("summary")) return "Demo title";
			if (n.includes("body") || n.includes("text") || n.includes("message") || n.includes("content")) return "Hello from the emulator.";
			return `demo ${name}`;
		}
	}
}

/** The last user turn's text, or the content of its last tool_result. */
function lastInput(messages: WireMessage[]): string {
	const user = messages.findLast((m) => m.role === "user");
	if (!user) return "";
	if (typeof user.content === "string") return user.content;
	const result = user.content.findLast((b) => b.type === "tool_result");
	if (result) return textOf((result as { content?: string | WireContentBlock[] }).content ?? "");
	return textOf(user.content);
}

// ── Building answers ───────────────────────────────────────────────────────────────────────────

function textBlock(text: string): ResponseBlock {
	return { type: "text", text, citations: null };
}

function toolUseBlock(name: string, input: unknown, id?: string): ResponseBlock {
	return { type: "tool_use", id: id ?? newId("toolu_01", 22), name, input: input ?? {}, caller: { type: "direct" } };
}

/** A final text, cut at max_tokens (about 4 characters a token) as the real API would; no block for "". */
function finalText(text: string, maxTokens: number): Composed {
	if (text === "") return { content: [], stopReason: "end_turn" };
	const chars = [...text];
	if (Math.ceil(chars.length / 4) > maxTokens) return { content: [textBlock(chars.slice(0, maxTokens * 4).join(""))], stopReason: "max_tokens" };
	return { content: [textBlock(text)], stopReason: "end_turn" };
}
