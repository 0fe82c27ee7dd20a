// What the drover binary prints on a terminal of a given width, for text whose UTF-16 length is not
// its width: CJK (two columns a character), emoji (two units, two columns; a family of them eleven
// units), and the escapes `printable` writes for control characters. Served by a fake API.
import { spawnSync } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import stringWidth from "string-width";
import { describe, expect, it } from "vitest";
import { paint, table, truncate } from "../../cli/format.ts";
import { jobRecord } from "../helpers/job-record.ts";
import { runOnTerminal } from "./cli-process.ts";
import { serversClosedAfterEach } from "./test-servers.ts";

const JOB = "job-2026-01-01-abcdef";
const TOKEN = "fake-token-0123456789";
const EMOJI_SUMMARY = `a${"😀".repeat(40)}`;
const CJK_SUMMARY = "東京".repeat(20);

const { servers } = serversClosedAfterEach();

/** A fake API answering `routes` ("METHOD /path?query" → JSON body); anything else a 404. */
async function fakeApi(routes: Record<string, unknown>): Promise<string> {
	const server = createServer((req, res) => {
		const body = routes[`${req.method} ${req.url}`];
		res.writeHead(body === undefined ? 404 : 200, { "content-type": "application/json" });
		res.end(JSON.stringify(body ?? { error: { code: "not_found", message: `no route for ${req.method} ${req.url}` } }));
	});
	servers.push(server);
	server.listen(0, "127.0.0.1");
	await once(server, "listening");
	return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const record = (summary: string) => jobRecord({ summary });

const listed = (summary: string, n: number) => ({
	id: `job-2026-01-01-abcde${n}`,
	agent: "fake",
	status: "completed",
	trigger_type: "manual",
	schedule: null,
	started_at: "2026-01-01T00:00:01.000Z",
	duration_seconds: 1.5,
	summary,
});

/** The CLI's stdout on a terminal `columns` wide, without colour, its lines. */
async function onTerminal(url: string, args: string[], columns: number): Promise<string[]> {
	const { status, stdout } = await runOnTerminal(args, { DROVER_URL: url, DROVER_TOKEN: TOKEN, NO_COLOR: "1" }, columns);
	expect(status, stdout).toBe(0);
	return stdout.trimEnd().split("\n");
}

/** Whether `text` ends inside one of printable's escapes (`\x1`, `\u20`), which would read as another. */
const endsInEscape = (text: string) => /\\(?:x[0-9a-f]?|u[0-9a-f]{0,3})$/.test(text.replace(/…$/, ""));

describe("text cut to a terminal's width", () => {
	it("is cut between characters, never inside an escape, and fits the width in columns", () => {
		for (let max = 1; max <= 45; max++) {
			const cut = truncate(EMOJI_SUMMARY, max);
			expect(cut.isWellFormed(), `${max}: ${JSON.stringify(cut)}`).toBe(true);
			expect(stringWidth(cut)).toBeLessThanOrEqual(max);
			const escaped = truncate("\x1b[31mred\x1b[0m \x9b2J and \u202eevil", max);
			expect(endsInEscape(escaped), `${max}: ${escaped}`).toBe(false);
			expect(stringWidth(escaped)).toBeLessThanOrEqual(max);
		}
		expect(truncate(EMOJI_SUMMARY, 10)).toBe("a😀😀😀😀…");
		expect(truncate(`x${"👨‍👩‍👧‍👦".repeat(5)}`, 6)).toBe("x👨‍👩‍👧‍👦👨‍👩‍👧‍👦…");
		expect(truncate("e\u0301".repeat(10), 5)).toBe("e\u0301".repeat(4) + "…");
	});

	it("keeps a table of CJK text within the terminal's columns, its columns aligned", () => {
		const rows = [
			{ id: "job-1", summary: CJK_SUMMARY, status: "ok" },
			{ id: "job-2", summary: "plain", status: "ok" },
		];
		const columns = [
			{ header: "ID", value: (r: (typeof rows)[number]) => r.id },
			{ header: "SUMMARY", value: (r: (typeof rows)[number]) => r.summary, shrink: "text" as const },
			{ header: "STATUS", value: (r: (typeof rows)[number]) => r.status },
		];
		const lines = table(rows, columns, paint(false), 60).split("\n");
		for (const line of lines) expect(stringWidth(line), line).toBeLessThanOrEqual(60);
		// STATUS starts at the same column on every line.
		const at = lines.map((l) => stringWidth(l.slice(0, l.lastIndexOf(l.includes("STATUS") ? "STATUS" : "ok"))));
		expect(new Set(at).size).toBe(1);
		expect(lines[1]).toContain("東京東京");
		expect(lines[1]).toContain("…");
	});

	it.skipIf(spawnSync("script", ["--version"]).status !== 0)("on a 90-column terminal: drover jobs and drover job print whole characters, each line within 90 columns", async () => {
		const url = await fakeApi({
			"GET /v1/jobs?limit=20": { jobs: [listed(EMOJI_SUMMARY, 1), listed(CJK_SUMMARY.repeat(3), 2), listed(`${"x".repeat(17)}\x1b[2J${"x".repeat(20)}`, 3)], next_cursor: null },
			[`GET /v1/jobs/${JOB}`]: record(`ab${"😀".repeat(60)}`),
		});
		for (const args of [["jobs"], ["job", JOB]]) {
			const lines = await onTerminal(url, args, 90);
			for (const line of lines) {
				expect(line, args.join(" ")).not.toContain("\ufffd");
				expect(stringWidth(line), line).toBeLessThanOrEqual(90);
				expect(endsInEscape(line), line).toBe(false);
			}
		}
		const summary = (await onTerminal(url, ["job", JOB], 90)).find((l) => l.startsWith("summary"))!;
		expect(summary).toMatch(/^summary\s+ab(?:😀)+…$/);
	});
});

describe("drover job's cut fields on a narrow terminal", () => {
	// "cancel requested" (16) and "plain-text log" (14) are the widest keys: the value column starts
	// two past them, so a prompt or summary cut to a fixed width would run past the terminal's edge.
	it.skipIf(spawnSync("script", ["--version"]).status !== 0)("cuts the prompt and summary to what the widest key leaves of the terminal, at 60 and 50 columns", async () => {
		const long = `${"word ".repeat(30)}東京${"😀".repeat(10)}`;
		const url = await fakeApi({
			[`GET /v1/jobs/${JOB}`]: { ...record(long), prompt: long, status: "running", finished_at: null, duration_seconds: null, cancel_requested: "root", output_log: `jobs/fake/${JOB}/output.log` },
		});
		for (const columns of [60, 50]) {
			const lines = await onTerminal(url, ["job", JOB], columns);
			const cut = lines.filter((l) => /^(?:prompt|summary) /.test(l));
			expect(cut, lines.join("\n")).toHaveLength(2);
			for (const line of cut) {
				expect(stringWidth(line), line).toBe(columns);
				expect(line).toMatch(/^(?:prompt|summary) {10,}word word .*…$/);
			}
		}
	});
});
