// Shell completion as a user meets it: the script `drover completion <shell>` prints, loaded into
// real bash, zsh and fish, completing from the drover on PATH and a fake API's agents, jobs,
// incidents and notepad keys.
import { spawn } from "node:child_process";
import { chmodSync, existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CLI, childEnv, runCliProcess, scratchDir } from "./cli-process.ts";
import { serversClosedAfterEach } from "./test-servers.ts";

const TOKEN = "completion-token-0123456789";
const { listen } = serversClosedAfterEach();

/** A directory holding a `drover` that runs this checkout's CLI: the scripts call drover by name. */
const BIN = (() => {
	const dir = scratchDir("bin-");
	const shim = path.join(dir, "drover");
	writeFileSync(shim, `#!/bin/sh\nexec '${process.execPath}' '${CLI}' "$@"\n`);
	chmodSync(shim, 0o755);
	return dir;
})();

/** A file a notepad key would create, were the key run as a command. */
const MARKER = path.join(scratchDir("marker-"), "ran");

/** A fake API with two agents, two jobs, an open incident and a notepad; every request it saw. */
async function fleetApi(): Promise<{ url: string; seen: string[] }> {
	const seen: string[] = [];
	const url = await listen((req, res) => {
		const u = new URL(req.url!, "http://x");
		seen.push(`${req.headers.authorization === `Bearer ${TOKEN}` ? "" : "(no token) "}${u.pathname}${u.search}`);
		const answer = (body: unknown) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
		if (req.headers.authorization !== `Bearer ${TOKEN}`) return res.writeHead(401, { "content-type": "application/json" }).end('{"error":{"code":"unauthorized","message":"invalid token"}}');
		if (u.pathname === "/v1/agents") {
			const prefix = u.searchParams.get("prefix") ?? "";
			return answer({ agents: ["site-watch", "standup", "triage"].filter((n) => n.startsWith(prefix)).map((name) => ({ name, source: "file" })), next_cursor: null });
		}
		if (u.pathname === "/v1/jobs") {
			return answer({
				jobs: [
					{ id: "job-2026-12-07-aaaaaa", agent: "site-watch", status: "running", trigger_type: "schedule" },
					{ id: "job-2026-12-06-bbbbbb", agent: "triage", status: "failed", trigger_type: "manual" },
				],
				next_cursor: null,
			});
		}
		if (u.pathname === "/v1/incidents") return answer({ incidents: [{ id: "triage_0123456789ab", agent: "triage", state: "alerted", error: "tool ticket failed: 502" }], next_cursor: null });
		if (u.pathname === "/v1/agents/triage/notepad") return answer({ watermark: "2026-12-01", "last:seen": "x" });
		// Keys an agent's run may write (any printable text): what a shell would expand if it read them as code.
		if (u.pathname === "/v1/agents/ops/notepad") return answer({ [`$(touch ${MARKER})`]: "x", "*": "x", "my key": "x" });
		res.writeHead(404, { "content-type": "application/json" }).end('{"error":{"code":"not_found","message":"no route"}}');
	});
	return { url, seen };
}

/** Runs `script` in `shell` with the drover shim on PATH; its stdout and stderr. */
function inShell(shell: "bash" | "zsh" | "fish", script: string, env: Record<string, string>): Promise<{ status: number | null; stdout: string; stderr: string }> {
	const child = spawn(shell, ["-c", script], { env: { ...childEnv(env), PATH: `${BIN}:${process.env.PATH ?? ""}`, HOME: scratchDir("home-") }, stdio: ["ignore", "pipe", "pipe"] });
	let stdout = "";
	let stderr = "";
	child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
	child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
	const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
	return new Promise((resolve) =>
		child.on("close", (status) => {
			clearTimeout(timer);
			resolve({ status, stdout, stderr });
		}),
	);
}

/**
 * What bash hands a completion function for `drover <words…>` typed with the cursor at its end: the line,
 * and its words split at blanks and again at COMP_WORDBREAKS' ":" and "=" (`http://x:1` is `http`, `:`,
 * `//x`, `:`, `1`), as a real Tab gives them.
 */
function bashLine(words: readonly string[]): string {
	const line = ["drover", ...words].join(" ");
	const split = ["drover", ...words].flatMap((w) => (w === "" ? [""] : w.split(/([:=]+)/).filter((p) => p !== "")));
	const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
	return `COMP_LINE=${q(line)}; COMP_POINT=\${#COMP_LINE}; COMP_WORDS=(${split.map(q).join(" ")}); COMP_CWORD=${split.length - 1}`;
}

/** bash: what Tab offers after `words` (the last being the word under the cursor), as COMPREPLY holds it. */
async function bashTab(words: string[], env: Record<string, string>, cwd?: string): Promise<string[]> {
	return bashTabWith(bashLine(words), env, cwd);
}

/** bash: what Tab offers given `setup` (COMP_LINE, COMP_POINT, COMP_WORDS and COMP_CWORD assigned). */
async function bashTabWith(setup: string, env: Record<string, string>, cwd?: string): Promise<string[]> {
	// Called as Tab would call it; compopt only works inside a real completion, so it is recorded here.
	// nounset, as some users set it: the function must not trip on it.
	const script = `${cwd ? `cd '${cwd}'; ` : ""}set -u; compopt() { echo "compopt $1 $2" >&2; }; source <(drover completion bash); ${setup}; _drover_complete; printf '%s\\n' "\${COMPREPLY[@]}"`;
	const r = await inShell("bash", script, env);
	expect(r.status, r.stderr).toBe(0);
	return [...r.stdout.split("\n").filter((l) => l !== ""), ...r.stderr.split("\n").filter((l) => l.startsWith("compopt"))];
}

describe("drover completion", () => {
	it("prints a script for bash, zsh and fish, and refuses another shell as a usage error", async () => {
		for (const [shell, line] of [
			["bash", "complete -F _drover_complete drover"],
			["zsh", "compdef _drover drover"],
			["fish", "complete -c drover -f -a '(__drover_complete)'"],
		] as const) {
			const r = await runCliProcess(["completion", shell], {});
			expect(r.status, r.stderr).toBe(0);
			expect(r.stdout).toContain(line);
		}
		const bad = await runCliProcess(["completion", "powershell"], {});
		expect(bad.status).toBe(2);
		expect(bad.stderr).toContain("Allowed choices are bash, zsh, fish");
		// The command the scripts call is not for people: not in the help.
		const help = await runCliProcess(["--help"], {});
		expect(help.stdout).toMatch(/^ {2}completion /m);
		expect(help.stdout).not.toContain("__complete");
	});

	it("in bash completes commands, subcommands, options and their choices, and offers file names only where a file goes", async () => {
		const env = { DROVER_URL: "http://127.0.0.1:9", DROVER_TOKEN: TOKEN };
		expect(await bashTab(["inc"], env)).toEqual(["incidents", "incident"]);
		expect(await bashTab(["incidents", ""], env)).toEqual(["close", "resolve", "help"]);
		expect(await bashTab(["jobs", "--st"], env)).toEqual(["--status"]);
		expect(await bashTab(["jobs", "--status", "c"], env)).toEqual(["completed", "cancelled"]);
		// Written --status=c, bash keeps --status= (it splits the word at =) and takes the value.
		expect(await bashTab(["jobs", "--status=c"], env)).toEqual(["completed", "cancelled"]);
		// The cursor inside a word (moved back after typing the line, as a real pty's Tab reported it):
		// bash replaces the word up to the cursor and keeps the rest, so that part alone is completed.
		expect(await bashTabWith("COMP_LINE='drover jobs --sta --agent x'; COMP_POINT=15; COMP_WORDS=(drover jobs --sta --agent x); COMP_CWORD=2", env)).toEqual(["--status", "--since"]);
		expect(await bashTabWith("COMP_LINE='drover jobs --status=c --agent x'; COMP_POINT=21; COMP_WORDS=(drover jobs --status = c --agent x); COMP_CWORD=4", env)).toContain("pending");
		// Written after the subcommand, the program's options are offered too; --version is the program's alone.
		expect(await bashTab(["trigger", "--u"], env)).toEqual(["--url"]);
		expect(await bashTab(["trigger", "--v"], env)).toEqual([]);
		expect(await bashTab(["help", "incidents", ""], env)).toEqual(["close", "resolve"]);
		expect(await bashTab(["incidents", "help", ""], env)).toEqual(["close", "resolve"]);
		expect(await bashTab(["completion", ""], env)).toEqual(["bash", "zsh", "fish"]);
		// A file: the shell's own file names; a prompt: nothing, not the file names.
		expect(await bashTab(["apply", ""], env)).toEqual(["compopt -o default"]);
		expect(await bashTab(["trigger", "triage", ""], env)).toEqual([]);
	});

	it("in bash completes agents, jobs, incidents and notepad keys from the API DROVER_URL names, with its token", async () => {
		const api = await fleetApi();
		const env = { DROVER_URL: api.url, DROVER_TOKEN: TOKEN };
		expect(await bashTab(["trigger", "s"], env)).toEqual(["site-watch", "standup"]);
		expect(await bashTab(["cancel", ""], env)).toEqual(["job-2026-12-07-aaaaaa", "job-2026-12-06-bbbbbb"]);
		expect(await bashTab(["incidents", "resolve", ""], env)).toEqual(["triage_0123456789ab"]);
		expect(await bashTab(["notepad", "triage", ""], env)).toEqual(["list", "get", "set", "edit", "delete"]);
		expect(await bashTab(["notepad", "triage", "get", "w"], env)).toEqual(["watermark"]);
		// usage --agent takes a list: its last name is completed, the ones before kept.
		expect(await bashTab(["usage", "--agent", "site-watch,tr"], env)).toEqual(["site-watch,triage"]);
		// Sessions' agent, beside its subcommands.
		expect(await bashTab(["sessions", "st"], env)).toEqual(["standup"]);
		expect(await bashTab(["logs", "--job", "job-2026-12-06"], env)).toEqual(["job-2026-12-06-bbbbbb"]);
		expect(api.seen).toEqual([
			"/v1/agents?view=names&limit=200&prefix=s",
			"/v1/jobs?limit=50",
			"/v1/incidents?state=open&limit=50",
			"/v1/agents/triage/notepad",
			"/v1/agents?view=names&limit=200&prefix=tr",
			"/v1/agents?view=names&limit=200&prefix=st",
			"/v1/jobs?limit=50",
		]);
	});

	it("in bash gives a server's values as words, never run or globbed, and a word bash split at : or = whole", async () => {
		const api = await fleetApi();
		const env = { DROVER_URL: api.url, DROVER_TOKEN: TOKEN };
		// A directory with files a * would expand to.
		const cwd = scratchDir("cwd-");
		writeFileSync(path.join(cwd, "afile"), "");
		expect(await bashTab(["notepad", "ops", "get", ""], env, cwd)).toEqual([`\\$\\(touch\\ ${MARKER.replace(/[^\w/.-]/g, "\\$&")}\\)`, "\\*", "my\\ key"]);
		expect(existsSync(MARKER)).toBe(false);
		// bash hands `last:` as `last` and `:`, and keeps what comes before the colon: the rest is offered.
		expect(await bashTab(["notepad", "triage", "get", "last:"], env)).toEqual(["seen"]);
		// A URL on the line, which bash splits at each colon, names the server asked.
		const other = await fleetApi();
		expect(await bashTab(["--url", other.url, "--token", TOKEN, "trigger", "tri"], { DROVER_URL: "http://127.0.0.1:9" })).toEqual(["triage"]);
		expect(other.seen).toEqual(["/v1/agents?view=names&limit=200&prefix=tri"]);
	});

	it("in bash offers nothing and prints nothing when drover answers nothing (one on PATH without __complete)", async () => {
		const dir = scratchDir("old-bin-");
		writeFileSync(path.join(dir, "drover"), `#!/bin/sh\n[ "$1" = completion ] && exec '${process.execPath}' '${CLI}' "$@"\nexit 1\n`);
		chmodSync(path.join(dir, "drover"), 0o755);
		const r = await inShell("bash", `set -u; PATH='${dir}':$PATH; source <(drover completion bash); ${bashLine(["trigger", ""])}; _drover_complete; echo "\${#COMPREPLY[@]} offered"`, {});
		expect(r).toEqual({ status: 0, stdout: "0 offered\n", stderr: "" });
	});

	it("asks the server --url and --token name on the line being completed, and offers nothing, printing nothing, when no server answers", async () => {
		const api = await fleetApi();
		expect(await bashTab(["--url", api.url, "--token", TOKEN, "trigger", "tri"], { DROVER_URL: "http://127.0.0.1:9" })).toEqual(["triage"]);
		expect(api.seen).toEqual(["/v1/agents?view=names&limit=200&prefix=tri"]);
		const down = await inShell("bash", `source <(drover completion bash); ${bashLine(["trigger", ""])}; _drover_complete; echo "\${#COMPREPLY[@]} offered"`, { DROVER_URL: "http://127.0.0.1:9", DROVER_TOKEN: TOKEN });
		expect(down).toEqual({ status: 0, stdout: "0 offered\n", stderr: "" });
		// A refused token offers nothing either: no error text lands on the command line.
		const refused = await bashTab(["trigger", ""], { DROVER_URL: api.url, DROVER_TOKEN: "wrong" });
		expect(refused).toEqual([]);
	});

	it("in zsh offers each candidate with its description, a colon in a value escaped", async () => {
		const api = await fleetApi();
		// zsh's completion system needs a line editor; its two functions the script calls are stood in for.
		const stubs = `compdef() {}; _describe() { print -rl -- "\${(@P)2}"; }; _files() { print FILES; }`;
		const r = await inShell(
			"zsh",
			`${stubs}; source <(drover completion zsh); words=(drover cancel ''); CURRENT=3; _drover; words=(drover notepad triage get ''); CURRENT=5; _drover; words=(drover apply ''); CURRENT=3; _drover`,
			{ DROVER_URL: api.url, DROVER_TOKEN: TOKEN },
		);
		expect(r.stderr).toBe("");
		expect(r.stdout.split("\n")).toEqual(["job-2026-12-07-aaaaaa:site-watch running", "job-2026-12-06-bbbbbb:triage failed", "watermark", "last\\:seen", "FILES", ""]);
	});

	it("in fish completes by fish's own complete -C, with descriptions", async () => {
		const api = await fleetApi();
		const r = await inShell("fish", `drover completion fish | source; complete -C 'drover inci'; complete -C 'drover incidents resolve '; complete -C 'drover incident '; complete -C 'drover jobs --status fa'; complete -C 'drover jobs --status=fa'`, { DROVER_URL: api.url, DROVER_TOKEN: TOKEN });
		expect(r.stderr).toBe("");
		expect(r.stdout.split("\n")).toEqual([
			"incident\tone incident",
			expect.stringMatching(/^incidents\tfailure incidents/),
			"triage_0123456789ab\ttriage alerted: tool ticket failed: 502",
			"triage_0123456789ab\ttriage alerted: tool ticket failed: 502",
			"failed",
			"--status=failed",
			"",
		]);
	});
});
