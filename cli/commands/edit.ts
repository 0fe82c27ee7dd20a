import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Command } from "commander";
import { ApiError, CliError } from "../client.ts";
import { act, pathSegment, type Context } from "../context.ts";
import { printable, shellWord } from "../format.ts";
import { shapes } from "../shapes.ts";

const YAML = "application/yaml";

export function registerEdit(program: Command): void {
	program
		.command("edit")
		.description("edit an API agent's definition as YAML in $VISUAL or $EDITOR (vi when neither is set), then save it (admin): sent as a change to the revision it was read at, so a change made meanwhile is refused rather than overwritten; a refused edit opens again with the problems above it")
		.argument("<agent>", "agent name", pathSegment)
		.action(act(edit));
}

/** The comment the file opens with: stripped before the text is sent (lines from the top that start with #). */
function header(agent: string, revision: string, problem: string | null): string {
	const lines = [
		`Editing ${agent} (revision ${revision}). Save and close to apply it; leave it empty to cancel.`,
		"Lines at the top starting with # are left out.",
		...(problem === null ? [] : ["", "It was not saved:", ...problem.split("\n")]),
	];
	return lines.map((l) => (l === "" ? "#" : `# ${l}`)).join("\n") + "\n";
}

const withoutHeader = (text: string) => text.replace(/^(?:#[^\n]*(?:\n|$))+/, "");

/** Runs the editor on the file, as a shell would ("code --wait" is a command and its option). */
async function runEditor(file: string): Promise<void> {
	const editor = process.env.VISUAL || process.env.EDITOR || "vi";
	const child = spawn(`${editor} ${shellWord(file)}`, { shell: true, stdio: "inherit" });
	const [code, signal] = (await once(child, "exit")) as [number | null, NodeJS.Signals | null];
	if (code !== 0) throw new CliError(`the editor (${printable(editor)}) ${signal ? `was ended by ${signal}` : `exited with status ${code}`}; nothing was sent`);
}

/**
 * kubectl edit's loop: the definition into a file, the editor, the text sent with If-Match; a 400
 * opens the editor again on the text sent, the problems above it, until it is saved, left unchanged
 * or emptied. Anything else that stops it leaves the file where it is, named, so no edit is lost.
 */
async function edit(ctx: Context, agent: string): Promise<number> {
	const { text: original, headers } = await ctx.client.textAnswer(`/v1/agents/${encodeURIComponent(agent)}/definition`, YAML);
	if (headers.get("x-drover-source") === "file") throw new CliError(`${printable(agent)} is defined in fleet.yaml; change it there and deploy`);
	const etag = headers.get("etag") ?? "";
	const revision = etag.replace(/^"|"$/g, "");
	const dir = await mkdtemp(path.join(tmpdir(), "drover-edit-"));
	const file = path.join(dir, `${agent}.yaml`);
	let text = original;
	let problem: string | null = null;
	try {
		for (;;) {
			await writeFile(file, header(printable(agent), printable(revision), problem) + text);
			await runEditor(file);
			const edited = withoutHeader(await readFile(file, "utf8"));
			if (edited.trim() === "") {
				ctx.err("edit cancelled: the file was left empty; nothing changed");
				break;
			}
			if (edited === original) {
				ctx.err(`${printable(agent)} unchanged: nothing was sent`);
				break;
			}
			if (problem !== null && edited === text) throw new CliError("the same text was refused again; nothing changed");
			text = edited;
			try {
				const saved = await ctx.client.json(`/v1/agents/${encodeURIComponent(agent)}`, shapes.agentDetail, { method: "PUT", text: { content: text, type: YAML }, headers: { "if-match": etag } });
				const after = saved.definition_revision;
				ctx.out(after === revision ? `unchanged ${printable(agent)} (revision ${printable(revision)})` : `updated ${printable(agent)} (revision ${printable(revision)} → ${printable(after)})`);
				break;
			} catch (err) {
				if (!(err instanceof ApiError) || err.status !== 400) throw err;
				problem = err.message;
				ctx.err(`drover: not saved: ${printable(err.message)}`);
			}
		}
	} catch (err) {
		// An edit is kept, where the reader can take it from; a file never changed is not left behind.
		const left = await readFile(file, "utf8").then(withoutHeader, () => original);
		if (left !== original && err instanceof CliError) {
			const kept = `your edit is kept in ${shellWord(file)}`;
			// Still the API's error, so its request id is printed after a 5xx.
			if (err instanceof ApiError) throw new ApiError(err.status, err.code, err.message, kept, err.requestId);
			throw new CliError(err.message, err.exitCode, kept);
		}
		await rm(dir, { recursive: true, force: true });
		throw err;
	}
	await rm(dir, { recursive: true, force: true });
	return 0;
}
