/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";
import { deadline } from "../../src/shared/deadline.ts";

// The product's source as text (Vite inlines it at build time).
const sources = import.meta.glob(["/src/**/*.ts", "/durable-objects/**/*.ts", "!/src/dashboard/client.ts"], { query: "?raw", import: "default", eager: true }) as Record<string, string>;

describe("deadlines", () => {
	it("abort with a TimeoutError at the deadline, and with another signal's reason when it aborts first", async () => {
		const late = deadline(1);
		const reason = await new Promise((resolve) => late.signal.addEventListener("abort", () => resolve(late.signal.reason)));
		expect(reason).toMatchObject({ name: "TimeoutError" });

		const job = new AbortController();
		const early = deadline(60_000, job.signal);
		job.abort(new Error("cancelled"));
		expect(early.signal.aborted).toBe(true);
		expect((early.signal.reason as Error).message).toBe("cancelled");
		early.clear();
	});

	it("once cleared, never abort: the work they timed is over, and their timer is released", async () => {
		const cleared = deadline(1);
		cleared.clear();
		// A later deadline's timer fires after the cleared one's would have.
		const later = deadline(5);
		await new Promise((resolve) => later.signal.addEventListener("abort", resolve));
		expect(cleared.signal.aborted).toBe(false);
	});

	it("are the only timeouts the Worker sets on outbound calls: AbortSignal.timeout keeps its timer pending until it fires", () => {
		expect(Object.keys(sources).length).toBeGreaterThan(50);
		// workerd caps an isolate's pending timers at 10,000; a job of thousands of tool calls reached it.
		const offenders = Object.entries(sources)
			.filter(([, text]) => text.split("\n").some((line) => /AbortSignal\.timeout\(/.test(line) && !/^\s*(\*|\/\/)/.test(line)))
			.map(([file]) => file);
		expect(offenders).toEqual([]);
	});
});
