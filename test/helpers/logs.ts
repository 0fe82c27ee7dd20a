import { vi } from "vitest";

/**
 * Every line the Worker logs from here on, parsed (each is one JSON object: src/log.ts). The caller's
 * file restores the spies after each test (`vi.restoreAllMocks()`).
 */
export function captureLogs(): Record<string, unknown>[] {
	const lines: Record<string, unknown>[] = [];
	for (const method of ["debug", "log", "warn", "error"] as const) {
		vi.spyOn(console, method).mockImplementation((line: unknown) => void lines.push(JSON.parse(String(line)) as Record<string, unknown>));
	}
	return lines;
}

/**
 * The structured lines the Worker wrote while `fn` ran, of `event` (or any of `events`) when given,
 * parsed; the console's other output is dropped, and the spies are restored after.
 */
export async function loggedDuring(fn: () => Promise<unknown>, event?: string | readonly string[]): Promise<Record<string, unknown>[]> {
	const events = event === undefined ? null : typeof event === "string" ? [event] : event;
	const lines: Record<string, unknown>[] = [];
	const keep = (line: unknown) => {
		if (typeof line !== "string" || !line.startsWith("{")) return;
		const parsed = JSON.parse(line) as Record<string, unknown>;
		if (events === null || events.includes(parsed.event as string)) lines.push(parsed);
	};
	const spies = [vi.spyOn(console, "log").mockImplementation(keep), vi.spyOn(console, "warn").mockImplementation(keep), vi.spyOn(console, "error").mockImplementation(keep)];
	try {
		await fn();
	} finally {
		for (const spy of spies) spy.mockRestore();
	}
	return lines;
}
