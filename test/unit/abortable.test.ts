import { describe, expect, it } from "vitest";
import { abortable } from "../../src/shared/abortable.ts";

// The race the model client, the HTTP tools and the alarm pass put a call in: an abort holds even
// where the call does not observe its signal, and its reason (a deadline's, a cancel's) is what
// the caller's catch tells apart.

describe("abortable", () => {
	it("settles as the promise does while the signal stays quiet", async () => {
		const signal = new AbortController().signal;
		await expect(abortable(Promise.resolve(7), signal)).resolves.toBe(7);
		const boom = new Error("boom");
		await expect(abortable(Promise.reject(boom), signal)).rejects.toBe(boom);
	});

	it("rejects with the signal's own reason once it aborts, though the promise never settles", async () => {
		const controller = new AbortController();
		const reason = { kind: "deadline" };
		const raced = abortable(new Promise<number>(() => {}), controller.signal);
		controller.abort(reason);
		await expect(raced).rejects.toBe(reason);
	});

	it("rejects at once with the reason of a signal aborted before, whatever the promise would give", async () => {
		const controller = new AbortController();
		const reason = new Error("cancelled");
		controller.abort(reason);
		await expect(abortable(Promise.resolve(7), controller.signal)).rejects.toBe(reason);
		// The promise's own later rejection is left handled, not reported as unhandled.
		await expect(abortable(Promise.reject(new Error("late")), controller.signal)).rejects.toBe(reason);
	});
});
