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
