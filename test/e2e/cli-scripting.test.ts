// The drover binary as a script, a cron job or a CI step runs it: no terminal, a pipe for stdout,
// a stdin that may stay open, colour asked for or refused by the environment. Served by a fake API
// (node:http) that records what was asked of it.
import { describe, expect, it } from "vitest";
import { runCliProcess, runOnTerminal } from "./cli-process.ts";
import { serversClosedAfterEach } from "./test-servers.ts";

const TOKEN = "fake-token-0123456789";
const { listen } = serversClosedAfterEach();

/** A fake API answering GET /v1/jobs with an empty page and anything else with a 404; every request recorded. */
async function fakeApi(): Promise<{ url: string; seen: string[] }> {
	const seen: string[] = [];
	const url = await listen((req, res) => {
		seen.push(`${req.method} ${req.url}`);
		const found = req.method === "GET" && req.url?.startsWith("/v1/jobs?");
		res.writeHead(found ? 200 : 404, { "content-type": "application/json" });
		res.end(JSON.stringify(found ? { jobs: [], next_cursor: null } : { error: { code: "not_found", message: `no route for ${req.method} ${req.url}` } }));
	});
	return { url, seen };
}

/** The SGR sequence `format.ts`'s dim style opens with. */
const DIM = "\x1b[2m";

describe("colour, as the environment asks for it", () => {
	it("FORCE_COLOR colours into a pipe (a CI log that renders it), and --no-color still wins", async () => {
		const api = await fakeApi();
		// NO_COLOR unset: runCliProcess sets it unless the env given replaces it.
		const forced = await runCliProcess(["jobs"], { DROVER_URL: api.url, DROVER_TOKEN: TOKEN, NO_COLOR: "", FORCE_COLOR: "1" });
		expect(forced.status, forced.stderr).toBe(0);
		expect(forced.stdout).toBe(`${DIM}no jobs\x1b[22m\n`);
		const piped = await runCliProcess(["jobs"], { DROVER_URL: api.url, DROVER_TOKEN: TOKEN, NO_COLOR: "" });
		expect(piped.stdout).toBe("no jobs\n");
		const flag = await runCliProcess(["--no-color", "jobs"], { DROVER_URL: api.url, DROVER_TOKEN: TOKEN, NO_COLOR: "", FORCE_COLOR: "1" });
		expect(flag.stdout).toBe("no jobs\n");
	});

	it("FORCE_COLOR=0 and TERM=dumb turn it off on a terminal", async () => {
		const api = await fakeApi();
		const env = { DROVER_URL: api.url, DROVER_TOKEN: TOKEN, NO_COLOR: "" };
		const coloured = await runOnTerminal(["jobs"], env);
		expect(coloured.stdout).toContain(`${DIM}no jobs`);
		const zero = await runOnTerminal(["jobs"], { ...env, FORCE_COLOR: "0" });
		expect(zero.status).toBe(0);
		expect(zero.stdout).toContain("no jobs");
		expect(zero.stdout).not.toContain("\x1b[");
		const dumb = await runOnTerminal(["jobs"], { ...env, TERM: "dumb" });
		expect(dumb.status).toBe(0);
		expect(dumb.stdout).toContain("no jobs");
		expect(dumb.stdout).not.toContain("\x1b[");
	});
});

describe("an editor without a terminal", () => {
	// stdin a pipe that stays open, as a CI runner's or `ssh host drover …`'s: vi waited on it for keys forever.
	const openStdin = async () => {};

	it("edit with no VISUAL or EDITOR refuses at once, exit 2, before any request, saying what a script does instead", async () => {
		const api = await fakeApi();
		const r = await runCliProcess(["edit", "nightly"], { DROVER_URL: api.url, DROVER_TOKEN: TOKEN }, openStdin);
		expect(r.status, r.stderr).toBe(2);
		expect(r.stdout).toBe("");
		expect(r.stderr).toBe(
			[
				"drover: drover edit opens vi (neither VISUAL nor EDITOR is set), which needs a terminal, and stdin is not one: nothing was opened",
				"drover: hint: in a script, drover definition nightly > nightly.yaml, change it, then drover apply nightly.yaml, or set EDITOR to a command that edits the file it is given",
				"",
			].join("\n"),
		);
		expect(api.seen).toEqual([]);
	});

	it("notepad edit likewise; an EDITOR that is set is run as set, terminal or not", async () => {
		const api = await fakeApi();
		const r = await runCliProcess(["notepad", "nightly", "edit", "cursor"], { DROVER_URL: api.url, DROVER_TOKEN: TOKEN }, openStdin);
		expect(r.status, r.stderr).toBe(2);
		expect(r.stderr).toContain("drover: drover notepad edit opens vi (neither VISUAL nor EDITOR is set), which needs a terminal, and stdin is not one: nothing was opened\n");
		expect(r.stderr).toContain("drover notepad nightly set cursor <value|->");
		expect(api.seen).toEqual([]);
		// The fake has no notepad: the request made is the proof the editor was not refused.
		const set = await runCliProcess(["notepad", "nightly", "edit", "cursor"], { DROVER_URL: api.url, DROVER_TOKEN: TOKEN, EDITOR: "true" }, openStdin);
		expect(set.status).toBe(1);
		expect(api.seen).toEqual(["GET /v1/agents/nightly/notepad/cursor", "GET /v1/agents/nightly/notepad"]);
	});
});
