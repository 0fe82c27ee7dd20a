// The deployed bundle is minified, and a logged stack is text nothing remaps: scripts/map-stack.mjs
// turns one back into source positions through the bundle's source map.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, inject, it, vi } from "vitest";

const SCRIPT = path.resolve(import.meta.dirname, "../../scripts/map-stack.mjs");

describe("npm run stack", () => {
	it("maps a logged error's minified stack to drover's source files", async () => {
		const { url, logFile, sourceMap } = inject("drover");
		// fleet.yaml's triage agent names a webhook secret the e2e Worker does not set: a 503, logged with
		// its stack at LOG_LEVEL debug (the e2e Worker's; at info an expected error's line has none).
		const res = await fetch(`${url}/v1/hooks/triage`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
		expect(res.status).toBe(503);
		const line = await vi.waitFor(() => {
			const found = readFileSync(logFile, "utf8")
				.split("\n")
				.find((l) => l.includes('"request.failed"') && l.includes("/v1/hooks/triage"));
			if (!found) throw new Error("no request.failed line yet");
			return found;
		});
		const minified = JSON.parse(line).stack as string;
		expect(minified).toMatch(/index\.js:\d+:\d+/);

		const r = spawnSync(process.execPath, [SCRIPT, "--map", sourceMap], { input: `${line}\n`, encoding: "utf8" });
		expect(r.status, r.stderr).toBe(0);
		const [fields, ...stack] = r.stdout.trimEnd().split("\n");
		expect(JSON.parse(fields ?? "")).toMatchObject({ event: "request.failed", path: "/v1/hooks/triage", code: "unavailable" });
		expect(stack[0]).toBe(minified.split("\n")[0]);
		const frames = stack.slice(1).map((f) => f.trim());
		expect(frames.length).toBeGreaterThan(0);
		// Every frame now names a source file; the first is the route that refused.
		for (const f of frames) expect(f).toMatch(/^at (async )?(src|durable-objects|node_modules)\/\S+\.(ts|tsx|js):\d+:\d+$/);
		expect(frames[0]).toMatch(/^at src\/api\/hooks\.ts:\d+:\d+$/);

		// The same line as `wrangler tail --format json` prints it: an event spread over indented lines.
		const event = JSON.stringify({ outcome: "ok", logs: [{ message: [line], level: "log", timestamp: 0 }] }, null, 4);
		const tail = spawnSync(process.execPath, [SCRIPT, "--map", sourceMap], { input: `${event}\n`, encoding: "utf8" });
		expect(tail.status, tail.stderr).toBe(0);
		expect(tail.stdout).toBe(r.stdout);
	});

	it("says what to do when there is no source map", () => {
		const r = spawnSync(process.execPath, [SCRIPT, "--map", "/nonexistent/index.js.map"], { input: "", encoding: "utf8" });
		expect(r.status).toBe(2);
		expect(r.stderr).toContain("npm run check");
	});
});
