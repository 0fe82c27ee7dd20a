import { readFile, writeFile } from "node:fs/promises";
import type { Command } from "commander";
import { isRole, roleAllows } from "../../src/api/auth/roles.ts";
import { ApiError, CliError, STRONGER_ROLE_HINT } from "../client.ts";
import { act, pathSegment, type Context } from "../context.ts";
import { inEditFile, requireEditor, runEditor } from "../editor.ts";
import { printable, shellWord } from "../format.ts";
import { shapes } from "../shapes.ts";

const YAML = "application/yaml";

export function registerEdit(program: Command): void {
	program
		.command("edit")
		.description("edit an API agent's definition as YAML in $VISUAL or $EDITOR (vi when neither is set), then save it (admin): sent as a change to the revision it was read at, so a change made meanwhile is refused rather than overwritten; a refused edit opens again with the problems above it")
		.argument("<agent>", "agent name", pathSegment)
		.option("--json", "print the API's JSON for the agent saved (nothing on stdout when nothing was sent)")
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

const HEADER = /^(?:#[^\n]*(?:\n|$))+/;
const withoutHeader = (text: string) => text.replace(HEADER, "");
/** How many lines the file's header takes (withoutHeader leaves them out). */
const headerLines = (text: string) => (HEADER.exec(text)?.[0].match(/\n/g) ?? []).length;

/**
 * A refusal's positions ("line 7:10: …") count the lines of the text sent, which is the file
 * without its header: moved down by the header's lines, they are those of the file the person sees.
 */
const inFile = (problem: string, by: number) =>
	problem
		.replace(/\bline (\d+):(\d+): /g, (_, line: string, column: string) => `line ${Number(line) + by}:${column}: `)
		// An unclosed quote or bracket also names the line where the parser met it.
		.replace(/\bstill open at line (\d+)\b/g, (_, line: string) => `still open at line ${Number(line) + by}`);

/**
 * Saving needs the admin role: a token below it is refused before the editor opens, not after the
 * edit is made, as the API's 403 would (the same exit code, 1, and hint). A Worker whose GET /v1/me
 * does not say a role this CLI knows (one from before the route: a 404) is left to refuse the save.
 */
async function requireAdmin(ctx: Context): Promise<void> {
	const me = await ctx.client.json("/v1/me", shapes.me).catch(() => null);
	if (me === null || !isRole(me.role) || roleAllows(me.role, "admin")) return;
	throw new CliError(`edit saves an agent's definition, which needs the admin role; token "${printable(me.name)}" has ${me.role}: nothing was opened`, 1, STRONGER_ROLE_HINT);
}

/**
 * kubectl edit's loop: the definition into a file, the editor, the text sent with If-Match; a 400
 * opens the editor again on the text sent, the problems above it, until it is saved, left unchanged
 * or emptied. Anything else that stops it leaves the file where it is, named, so no edit is lost.
 */
async function edit(ctx: Context, agent: string, opts: { json?: boolean }): Promise<number> {
	requireEditor(ctx, "drover edit", `drover definition ${shellWord(agent)} > ${shellWord(`${agent}.yaml`)}, change it, then drover apply ${shellWord(`${agent}.yaml`)}`);
	await requireAdmin(ctx);
	const { text: original, headers } = await ctx.client.textAnswer(`/v1/agents/${encodeURIComponent(agent)}/definition`, YAML);
	if (headers.get("x-drover-source") === "file") throw new CliError(`${printable(agent)} is defined in fleet.yaml; change it there and deploy`);
	const etag = headers.get("etag") ?? "";
	const revision = etag.replace(/^"|"$/g, "");
	let text = original;
	let problem: string | null = null;
	await inEditFile(`${agent}.yaml`, original, withoutHeader, async (file) => {
		for (;;) {
			// The problem above the text, its lines counted in this file, whose header it lengthens (by
			// as many lines whatever its numbers).
			const above = problem === null ? null : inFile(problem, headerLines(header(printable(agent), printable(revision), problem)));
			await writeFile(file, header(printable(agent), printable(revision), above) + text);
			await runEditor(file);
			const saved = await readFile(file, "utf8");
			const edited = withoutHeader(saved);
			if (edited.trim() === "") {
				ctx.err("edit cancelled: the file was left empty; nothing changed");
				return;
			}
			if (edited === original) {
				ctx.err(`${printable(agent)} unchanged: nothing was sent`);
				return;
			}
			if (problem !== null && edited === text) throw new CliError("the same text was refused again; nothing changed");
			text = edited;
			try {
				const saved = await ctx.client.json(`/v1/agents/${encodeURIComponent(agent)}`, shapes.agentDetail, { method: "PUT", text: { content: text, type: YAML }, headers: { "if-match": etag } });
				const after = saved.definition_revision;
				if (opts.json) ctx.json(saved);
				else ctx.out(after === revision ? `unchanged ${printable(agent)} (revision ${printable(revision)})` : `updated ${printable(agent)} (revision ${printable(revision)} → ${printable(after)})`);
				return;
			} catch (err) {
				if (!(err instanceof ApiError) || err.status !== 400) throw err;
				problem = err.message;
				ctx.err(`drover: not saved: ${printable(inFile(err.message, headerLines(saved)))}`);
			}
		}
	});
	return 0;
}
