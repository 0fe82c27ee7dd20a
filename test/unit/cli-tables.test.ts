import { describe, expect, it } from "vitest";
import { Document, parse } from "yaml";
import { cancelReason, columnsOf, exitNote, fields, paint, pausedText, printableDeep, printableYaml, renderLine, shellWord, stamp, statusStyle, table, truncate, wantsColor, type Column } from "../../cli/format.ts";

// The CLI's tables, fields and output lines as a person at a terminal reads them (cli/format.ts).
// The e2e files run these through the real commands; here each rule is pinned where it is made.

const plain = paint(false);
const colour = paint(true);
/** What a terminal shows of a line: its columns, escape codes left out. */
const shownWidth = (line: string) => columnsOf(line.replace(/\x1b\[[0-9;]*m/g, ""));

interface Row {
	id: string;
	agent: string;
	status: string;
	note?: string;
	summary: string;
}
const columns: Column<Row>[] = [
	{ header: "ID", value: (r) => r.id },
	{ header: "AGENT", value: (r) => r.agent, shrink: "name" },
	{ header: "STATUS", value: (r) => r.status + (r.note ? ` (${r.note})` : ""), shrink: "note", keep: (r) => r.status },
	{ header: "SUMMARY", value: (r) => r.summary, shrink: "text" },
];
const rows: Row[] = [
	{ id: "job-2026-12-07-aaaaaa", agent: "nightly-dependency-audit", status: "completed", note: "1/1 calls failed", summary: "All forty-two dependencies are current; two have advisories." },
	{ id: "job-2026-12-07-bbbbbb", agent: "site-watch", status: "failed", summary: "Timed out." },
];

describe("a table", () => {
	it("into a pipe shows every column whole, two spaces apart, with no trailing spaces", () => {
		const lines = table(rows, columns, plain).split("\n");
		expect(lines[0]).toBe("ID                     AGENT                     STATUS                        SUMMARY");
		expect(lines[1]).toBe("job-2026-12-07-aaaaaa  nightly-dependency-audit  completed (1/1 calls failed)  All forty-two dependencies are current; two have advisories.");
		expect(lines[2]).toBe("job-2026-12-07-bbbbbb  site-watch                failed                        Timed out.");
	});

	it("on a terminal cuts free text to 24 columns first, then names to 8, then text on to 12, then the note after a status, never an id", () => {
		const at = (width: number) => table(rows, columns, plain, width).split("\n");
		// Whole, it takes 139 columns. The summary gives way first, down to 24 (at 103), and only then
		// the agent's name: a column less, and the name is cut, the summary not.
		expect(at(103)[1]).toBe("job-2026-12-07-aaaaaa  nightly-dependency-audit  completed (1/1 calls failed)  All forty-two dependenc…");
		expect(at(102)[1]).toBe("job-2026-12-07-aaaaaa  nightly-dependency-aud…  completed (1/1 calls failed)  All forty-two dependenc…");
		// The name down to 8 (at 87), then the summary on to 12 (at 75).
		expect(at(87)[1]).toBe("job-2026-12-07-aaaaaa  nightly…  completed (1/1 calls failed)  All forty-two dependenc…");
		expect(at(86)[1]).toBe("job-2026-12-07-aaaaaa  nightly…  completed (1/1 calls failed)  All forty-two dependen…");
		// Then the note after the status, down to the status kept whole and a column for "…" (at 57).
		expect(at(75)[1]).toBe("job-2026-12-07-aaaaaa  nightly…  completed (1/1 calls failed)  All forty-t…");
		expect(at(74)[1]).toBe("job-2026-12-07-aaaaaa  nightly…  completed (1/1 calls faile…  All forty-t…");
		expect(at(57)[1]).toBe("job-2026-12-07-aaaaaa  nightly…  completed…  All forty-t…");
		// Last, the summary down to its header's width (at 52); the id never, so a table of uncut
		// columns alone stays wider than the terminal.
		expect(at(56)[1]).toBe("job-2026-12-07-aaaaaa  nightly…  completed…  All forty-…");
		expect(at(52)[1]).toBe("job-2026-12-07-aaaaaa  nightly…  completed…  All fo…");
		expect(at(20)[1]).toBe("job-2026-12-07-aaaaaa  nightly…  completed…  All fo…");
		expect(at(20)[2]).toBe("job-2026-12-07-bbbbbb  site-wa…  failed      Timed …");
		for (const width of [139, 103, 102, 87, 86, 75, 74, 57, 56, 52]) for (const line of at(width)) expect(shownWidth(line), `at ${width}`).toBeLessThanOrEqual(width);
	});

	it("leaves an optional column out only when cutting the others as far as they go before it would not fit", () => {
		const withModel: Column<Row>[] = [...columns.slice(0, 3), { header: "MODEL", value: () => "claude-sonnet-4-5", optional: 1 }, columns[3]!];
		const at = (width: number) => table(rows, withModel, plain, width).split("\n")[0];
		// The others cut as far as they go before it (names 8, text 12, notes 1): 21+2+8+2+10+2+17+2+12.
		expect(at(76)).toContain("MODEL");
		expect(at(75)).not.toContain("MODEL");
		expect(at(75)).toContain("SUMMARY");
	});

	it("measures wide characters in terminal columns, and never cuts one in half", () => {
		const wide: Row[] = [{ id: "job-1", agent: "東京-watch", status: "completed", summary: "東京の天気は晴れ、気温は二十度です。👨‍👩‍👧 家族" }];
		const lines = table(wide, columns, plain, 50).split("\n");
		for (const line of lines) expect(shownWidth(line)).toBeLessThanOrEqual(50);
		expect(lines[1]).toMatch(/…$/);
		expect(lines[1]).not.toMatch(/\ufffd/);
		// The header lines up with the cells by columns, not by UTF-16 length.
		expect(lines[0]!.indexOf("SUMMARY")).toBe(columnsOf(lines[1]!.slice(0, lines[1]!.indexOf("東京の"))));
	});

	it("cuts the widest of a kind first", () => {
		const names: Column<Row>[] = [
			{ header: "SCHEDULE", value: (r) => r.status, shrink: "name" },
			{ header: "AGENT", value: (r) => r.agent, shrink: "name" },
		];
		const one = [rows[0]!];
		// "completed" (9) and "nightly-dependency-audit" (24), two apart: 35. Four columns less come off the agent's name alone.
		expect(table(one, names, plain, 31).split("\n")[1]).toBe("completed  nightly-dependency-…");
	});

	it("ends no line in spaces, an empty last cell's row included", () => {
		const lines = table([{ ...rows[1]!, summary: "" }], columns, plain).split("\n");
		expect(lines[1]).toBe("job-2026-12-07-bbbbbb  site-watch  failed");
	});

	it("pads before it colours, so colour codes never shift a column", () => {
		const coloured = table(rows, [{ ...columns[2]!, style: () => colour.red }, columns[3]!], colour).split("\n");
		expect(coloured[2]).toBe(`\x1b[31mfailed                      \x1b[39m  Timed out.`);
		expect(coloured[0]).toBe(`\x1b[1mSTATUS                      \x1b[22m  \x1b[1mSUMMARY\x1b[22m`);
	});
});

describe("one line of text in a cell", () => {
	it("makes newlines and runs of whitespace one space, and control characters escapes", () => {
		expect(truncate("  first\r\n\tsecond\v\fthird  ", 100)).toBe("first second third");
		expect(truncate("red \x1b[31m here", 100)).toBe("red \\x1b[31m here");
	});

	it("fits its columns exactly, its last one the ellipsis, and never cuts an escape or a character in two", () => {
		expect(truncate("abcdefgh", 8)).toBe("abcdefgh");
		expect(truncate("abcdefghi", 8)).toBe("abcdefg…");
		// "\x1b" is four columns; cut inside it, "\x1" would read as something else.
		expect(truncate("ab\x1bcdef", 6)).toBe("ab…");
		expect(truncate("ab\u202ecdefghij", 8)).toBe("ab…");
		expect(truncate("ab\u202ecdefghij", 9)).toBe("ab\\u202e…");
		expect(truncate("ab👨‍👩‍👧cd", 4)).toBe("ab…");
		expect(truncate("東京東京", 5)).toBe("東京…");
		expect(truncate("anything", 0)).toBe("");
	});
});

describe("key and value lines", () => {
	it("align the keys, leave out a field without a value, and fit a value to the room its line leaves", () => {
		const rooms: number[] = [];
		const text = fields(
			[
				["id", "job-1"],
				["error", null],
				["summary", (room) => (rooms.push(room), "x".repeat(room))],
			],
			plain,
			40,
		);
		expect(text.split("\n")).toEqual(["id       job-1", `summary  ${"x".repeat(31)}`]);
		expect(rooms).toEqual([31]);
		// Never under a column, however long the keys: "…" still says something was there.
		fields([["a key as wide as the terminal itself", (room) => (rooms.push(room), "")]], plain, 20);
		expect(rooms.at(-1)).toBe(1);
	});
});

describe("an output line for a person", () => {
	const line = (o: unknown) => renderLine(JSON.stringify(o), plain, 60);
	it("says a system line's subtype, status and exit reason", () => {
		expect(line({ type: "system", subtype: "result", content: "done", status: "failed", exit_reason: "timeout" })).toBe("[system:result] done (failed, timeout)");
		expect(line({ type: "system", subtype: "approval", content: "approved with edits", tool_input: { path: "/tmp" } })).toBe('[system:approval] approved with edits {"path":"/tmp"}');
	});

	it("shows a tool call's input as JSON and a failed result's error, not its empty result", () => {
		expect(line({ type: "tool_use", tool_name: "http_fetch", input: { url: "https://x.test/\x1b[2J" } })).toBe('→ http_fetch {"url":"https://x.test/\\u001b[2J"}');
		expect(line({ type: "tool_result", success: true, result: "200 OK" })).toBe("← ok 200 OK");
		expect(line({ type: "tool_result", success: false, result: "", error: "connection refused" })).toBe("← error connection refused");
		expect(line({ type: "tool_result", result: "no success field" })).toBe("← error no success field");
	});

	it("says an error's code, a cut line's size, and shows what is not a JSON object as it is", () => {
		expect(line({ type: "error", code: "rate_limit", message: "slow down" })).toBe("error [rate_limit]: slow down");
		expect(line({ type: "assistant", content: "Half of it", truncated: { field: "content", bytes: 3145728 } })).toBe("Half of it [cut to fit: the line was 3,145,728 bytes]");
		expect(line({ type: "assistant", content: "" })).toBeNull();
		expect(renderLine("42", plain)).toBe("42");
		expect(renderLine("not json \x1b[2J", plain)).toBe("not json \\x1b[2J");
	});
});

describe("what the CLI prints for a person", () => {
	it("quotes a shell word only when it must, and a quote inside it so a POSIX shell reads it back", () => {
		expect(shellWord("a@b%c+d=e:f,g./h-i_j")).toBe("a@b%c+d=e:f,g./h-i_j");
		expect(shellWord("two words")).toBe("'two words'");
		expect(shellWord("it's")).toBe("'it'\\''s'");
	});

	it("says an automatic pause's reason once, and who else paused", () => {
		const at = "2026-12-07T11:58:00Z";
		const now = Date.parse("2026-12-07T12:00:00Z");
		expect(pausedText({ at, by: "auto", reason: "auto: secret X is not set" }, now)).toBe("paused 2m ago automatically: secret X is not set");
		expect(pausedText({ at, by: "root", reason: "maintenance" }, now)).toBe("paused 2m ago by root: maintenance");
		expect(pausedText({ at, by: null, reason: null }, now)).toBe("paused 2m ago");
	});

	it("says why a cancelled job was cancelled by its last move to cancelled, and an exit reason only where it adds something", () => {
		const transitions = [
			{ from: "pending", to: "cancelled", at: "2026-12-07T12:00:00Z", reason: "first" },
			{ from: "cancelled", to: "cancelled", at: "2026-12-07T12:00:01Z", reason: "by ops: wrong prompt" },
		];
		expect(cancelReason({ status: "cancelled", transitions } as Parameters<typeof cancelReason>[0])).toBe("by ops: wrong prompt");
		expect(cancelReason({ status: "failed", transitions } as Parameters<typeof cancelReason>[0])).toBeNull();
		expect(exitNote({ status: "failed", exit_reason: "timeout" })).toBe(" (timeout)");
		expect(exitNote({ status: "cancelled", exit_reason: "cancelled" })).toBe("");
		expect(exitNote({ status: "completed", exit_reason: "success" })).toBe("");
	});

	it("prints an instant to the second in UTC", () => {
		expect(stamp("2026-11-30T08:39:26.512Z")).toBe("2026-11-30 08:39:26Z");
		expect(stamp("not a time")).toBe("not a time");
	});

	it("makes every string of an answer printable, its keys too, and YAML that reads back as the same data", () => {
		expect(printableDeep({ "key\x1b[2J": ["v\x07"] })).toEqual({ "key\\x1b[2J": ["v\\x07"] });
		const data = { prompt: "right\u202eleft", plain: "ok" };
		const text = printableYaml(new Document(data));
		expect(text).toBe('prompt: "right\\u202eleft"\nplain: ok\n');
		expect(parse(text)).toEqual(data);
	});
});

describe("colour", () => {
	it("marks a status by what it asks of a person: red for what failed or cannot be known, yellow for what stopped short or waits, cyan for what runs", () => {
		const hue = (status: string) => statusStyle(colour, status)("x");
		expect(["completed", "delivered", "resolved"].map(hue)).toEqual(Array(3).fill("\x1b[32mx\x1b[39m"));
		expect(["failed", "indeterminate", "alerted", "detected"].map(hue)).toEqual(Array(4).fill("\x1b[31mx\x1b[39m"));
		expect(["cancelled", "skipped", "approval_pending"].map(hue)).toEqual(Array(3).fill("\x1b[33mx\x1b[39m"));
		expect(["running", "claimed"].map(hue)).toEqual(Array(2).fill("\x1b[36mx\x1b[39m"));
		expect(hue("pending")).toBe("x");
	});

	const tty = { isTTY: true };
	const vars = (set: Record<string, string>) => set as NodeJS.ProcessEnv;
	it("is on at a terminal, unless NO_COLOR, TERM=dumb or --no-color says not", () => {
		expect(wantsColor(tty, vars({}), true)).toBe(true);
		expect(wantsColor({ isTTY: false }, vars({}), true)).toBe(false);
		expect(wantsColor(tty, vars({ NO_COLOR: "1" }), true)).toBe(false);
		expect(wantsColor(tty, vars({ NO_COLOR: "" }), true)).toBe(true);
		expect(wantsColor(tty, vars({ TERM: "dumb" }), true)).toBe(false);
		expect(wantsColor(tty, vars({}), false)).toBe(false);
	});

	it("is forced by FORCE_COLOR, into a pipe too, and off for FORCE_COLOR=0 or false; --no-color wins", () => {
		expect(wantsColor({ isTTY: false }, vars({ FORCE_COLOR: "1", NO_COLOR: "1" }), true)).toBe(true);
		expect(wantsColor(tty, vars({ FORCE_COLOR: "0" }), true)).toBe(false);
		expect(wantsColor(tty, vars({ FORCE_COLOR: "FALSE" }), true)).toBe(false);
		expect(wantsColor({ isTTY: false }, vars({ FORCE_COLOR: "1" }), false)).toBe(false);
	});
});
