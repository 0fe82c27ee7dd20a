import { describe, expect, it } from "vitest";
import { createAgent } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { outputOf, runToRest } from "../helpers/jobs.ts";
import { fake } from "../helpers/outbound.ts";

/**
 * A cut of a tool's answer that falls between the two halves of an emoji leaves a lone surrogate:
 * not valid UTF-8 to store (SQLite keeps bytes that read back as U+FFFD) nor to send (the Messages
 * API refuses the request).
 */
const wellFormed = (text: string) => text.isWellFormed();
/** A lone surrogate in a failed assertion's message breaks the test runner's channel: shown escaped. */
const shown = (text: string) => JSON.stringify(text);

describe("a webhook tool's error answer cut to its excerpt", () => {
	it("is cut between characters: the JSONL, the tool call's record and the model all get the same text, and no false note of a cut", async () => {
		fake("https://tickets.example.test", () => new Response(`${"x".repeat(499)}😀 failed`, { status: 500 }));
		const emulator = useEmulator();
		emulator.enqueue({ tool_use: { name: "create_ticket", input: { title: "Disk full" } } }, { text: "It failed." });
		await createAgent({ name: "emoji-excerpt", tools: [{ type: "webhook", name: "create_ticket", description: "Create a ticket.", url_secret: "TEST_TICKETS_URL" }] });
		const job = await runToRest("emoji-excerpt");
		expect(job.status, JSON.stringify(job.error)).toBe("completed");

		const [line] = (await outputOf("emoji-excerpt", job.id)).filter((l) => l.type === "tool_result");
		const error = String(line!.error);
		const { tool_calls } = (await (await call(`/v1/jobs/${job.id}/tool-calls`)).json()) as { tool_calls: { result: string }[] };
		const sent = emulator.requests[1]!.messages!.at(-1)!.content as { type: string; content: string }[];
		for (const text of [error, tool_calls[0]!.result, sent[0]!.content, JSON.stringify(emulator.requests.map((r) => r.messages))]) {
			expect(wellFormed(text), shown(text.slice(-40))).toBe(true);
			expect(shown(text)).not.toContain("\ufffd");
			expect(shown(text)).not.toContain("result cut from");
		}
		expect(shown(error)).toMatch(/^"webhook answered 500: x{499}…"$/);
		expect(shown(tool_calls[0]!.result)).toBe(shown(error));
		expect(shown(sent[0]!.content)).toBe(shown(error));
	});
});

describe("a tool result too large for one output row", () => {
	it("keeps a head that ends between two emoji, not on the first half of one", async () => {
		// The two "!" put the cut that fits the row (949,850 units, with the fetch's 35-unit preamble) inside a pair.
		fake("https://status.example.test", () => new Response(`!!${"😀".repeat(500_000)}`, { headers: { "content-type": "text/plain" } }));
		const emulator = useEmulator();
		emulator.enqueue({ tool_use: { name: "http_fetch", input: { url: "https://status.example.test/" } } }, { text: "Read it." });
		await createAgent({ name: "emoji-row", tools: [{ type: "http_fetch", allow_hosts: ["status.example.test"], max_response_bytes: 10_000_000 }] });
		const job = await runToRest("emoji-row");
		expect(job.status, JSON.stringify(job.error)).toBe("completed");

		const line = (await outputOf("emoji-row", job.id)).find((l) => l.type === "tool_result")!;
		expect(line.truncated).toMatchObject({ field: "result" });
		const result = String(line.result);
		expect(wellFormed(result), shown(result.slice(-10))).toBe(true);
		expect(result.endsWith("😀")).toBe(true);
		expect(result.length).toBeGreaterThan(900_000);
	});
});
