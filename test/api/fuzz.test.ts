import { describe, expect, it } from "vitest";
import { createAgent, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { trigger } from "../helpers/jobs.ts";

interface Operation {
	method: string;
	path: string;
}

const HOSTILE_SEGMENTS = ["..%2F..%2Fetc%2Fpasswd", "%27%20OR%201%3D1--", "%E2%98%83%F0%9F%92%A5", "a".repeat(300), "%00", "job-2026-11-30-ABCDEF", "%3Cscript%3E"];
const HOSTILE_BODIES: [string, string][] = [
	["invalid JSON", "{\"prompt\": "],
	["a JSON array", "[1,2,3]"],
	["a JSON string", "\"just a string\""],
	["wrong types", JSON.stringify({ prompt: 42, value: [], decision: true, reason: {}, name: 7, schedules: "daily" })],
	["unknown fields", JSON.stringify({ totally: "unexpected", __proto__: { admin: true } })],
	["null", "null"],
];

async function operations(): Promise<Operation[]> {
	const doc = (await (await call("/openapi.json", { as: null })).json()) as { paths: Record<string, Record<string, unknown>> };
	return Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((method) => ({ method: method.toUpperCase(), path })));
}

/** What a refused request must leave as it was: the agent, its notepad, a job waiting on it, the fleet. */
async function snapshot(jobId: string): Promise<unknown> {
	const read = async (path: string) => {
		const res = await call(path);
		expect(res.status, path).toBe(200);
		return res.json();
	};
	const agent = (await read("/v1/agents/fuzz-target")) as Record<string, unknown>;
	const job = (await read(`/v1/jobs/${jobId}`)) as Record<string, unknown>;
	const agents = (await read("/v1/agents")) as { agents: { name: string; definition_revision: string }[] };
	return {
		agent,
		job: { status: job.status, revision: job.revision },
		notepad: await read("/v1/agents/fuzz-target/notepad"),
		agents: agents.agents.map((a) => [a.name, a.definition_revision]),
		jobs: ((await read("/v1/jobs?agent=fuzz-target")) as { jobs: unknown[] }).jobs.length,
	};
}

function fill(path: string, value: string): string {
	return path.replace(/\{[^}]+\}/g, value);
}

describe("every API route under hostile input", () => {
	it("answers a clear 4xx, never a 5xx, to hostile path segments, bodies and sizes, and changes nothing", async () => {
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "t" } } });
		await createAgent({
			name: "fuzz-target",
			tools: [{ type: "webhook", name: "create_ticket", description: "Create a ticket.", url_secret: "TEST_TICKETS_URL", requires_approval: true }],
		});
		await call("/v1/agents/fuzz-target/notepad/kept", { method: "PUT", as: "operate", body: { value: "unchanged" } });
		// A job that waits on an operator: hostile approvals, cancels and follow-ups must not move it.
		const waiting = await trigger("fuzz-target");
		await settle("fuzz-target");
		const before = await snapshot(waiting.id);
		expect(before).toMatchObject({ job: { status: "approval_pending" }, notepad: { kept: "unchanged" } });
		const ops = await operations();
		expect(ops.length).toBeGreaterThan(25);
		let tried = 0;
		const failures: string[] = [];
		const check = async (label: string, res: Response) => {
			tried++;
			const text = await res.text();
			// /healthz answers 503 by contract while the scheduler has not ticked: that is its report, not a crash.
			if (label.includes("/healthz") && res.status === 503) return;
			if (res.status >= 500) failures.push(`${label} → ${res.status} ${text.slice(0, 200)}`);
			else if (res.status >= 400) {
				const body = JSON.parse(text) as { error?: { code?: string; message?: string } };
				if (!body.error?.code || !body.error.message) failures.push(`${label} → ${res.status} without an error body`);
			}
		};
		for (const op of ops) {
			for (const segment of HOSTILE_SEGMENTS) {
				const path = fill(op.path, segment);
				await check(`${op.method} ${path}`, await call(path, { method: op.method, as: "admin", body: op.method === "GET" || op.method === "DELETE" ? undefined : {} }));
			}
			if (op.method === "GET" || op.method === "DELETE") continue;
			const path = op.path.replace("{agent}", "fuzz-target").replace(/\{[^}]+\}/g, op.path.includes("/jobs/") ? waiting.id : "kept");
			for (const [label, body] of HOSTILE_BODIES) {
				await check(`${op.method} ${path} with ${label}`, await call(path, { method: op.method, as: "admin", body }));
			}
			await check(`${op.method} ${path} with 300 KiB`, await call(path, { method: op.method, as: "admin", body: JSON.stringify({ prompt: "x".repeat(300 * 1024) }) }));
		}
		console.log(`fuzz: ${tried} requests, ${tried - failures.length} passed, ${failures.length} failed`);
		expect(failures).toEqual([]);
		expect(await snapshot(waiting.id)).toEqual(before);
	});

	it("refuses an oversized body with 413 before reading it", async () => {
		const res = await call("/v1/agents/fuzz-target/jobs", { method: "POST", as: "operate", body: JSON.stringify({ prompt: "x".repeat(1.3 * 1024 * 1024) }) });
		expect(res.status).toBe(413);
		expect(((await res.json()) as { error: { code: string } }).error.code).toBe("payload_too_large");
	});
});
