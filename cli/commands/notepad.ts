import { readFile, writeFile } from "node:fs/promises";
import type { Command } from "commander";
import { ApiError, CliError } from "../client.ts";
import { act, pathSegment, type Context } from "../context.ts";
import { inEditFile, requireEditor, runEditor } from "../editor.ts";
import { printable, shellWord, table, truncate } from "../format.ts";
import { shapes } from "../shapes.ts";
import { readStdin, withoutFinalNewline } from "../stdin.ts";
import { noteVersion } from "../../src/shared/note-version.ts";

export const ACTIONS = ["list", "get", "set", "edit", "delete"] as const;
const USAGE = "drover notepad <agent> list | get <key> | set <key> <value> | edit <key> | delete <key>";

interface NotepadOptions {
	json?: boolean;
	ifValue?: string;
	ifUnset?: boolean;
}

/** A value's version, quoted as the API's ETag gives it. */
const versionOf = (value: string) => `"${noteVersion(value)}"`;

export function registerNotepad(program: Command): void {
	program
		.command("notepad")
		.description("an agent's notepad, rendered into its next prompts: list | get <key> | set <key> <value> | edit <key> (in $VISUAL or $EDITOR, saved only if no one changed the key meanwhile) | delete <key>")
		.argument("<agent>", "agent name", pathSegment)
		.argument("[action]", `one of ${ACTIONS.join(", ")}`, "list")
		.argument("[key]", "notepad key (at most 128 characters)", pathSegment)
		.argument("[value]", 'for set: the value ("-" reads it from stdin, dropping one trailing newline, \\n or \\r\\n, as $(...) does)')
		.option("--if-value <value>", "set or delete: only while the key still holds this value (else nothing changes, exit 1)")
		.option("--if-unset", "set: only if the key is not set yet (else nothing changes, exit 1)")
		.option("--json", "print the API's JSON")
		.action(act(notepad));
}

async function notepad(ctx: Context, agent: string, action: string, typed: string | undefined, value: string | undefined, opts: NotepadOptions): Promise<number> {
	// The API stores keys NFC, and answers a write with the key so: sent as typed (a decomposed "é"
	// pasted from a file name), the key would not be in the answer that must hold it.
	const key = typed?.normalize("NFC");
	const base = `/v1/agents/${encodeURIComponent(agent)}/notepad`;
	const usage = (message: string) => new CliError(message, 2, USAGE);
	if (!(ACTIONS as readonly string[]).includes(action)) throw usage(`unknown notepad action ${JSON.stringify(action)}`);
	const expected = action === "list" ? 0 : action === "set" ? 2 : 1;
	const given = [key, value].filter((x) => x !== undefined).length;
	if (given !== expected) throw usage(`notepad ${action} takes ${expected === 0 ? "no" : expected} argument${expected === 1 ? "" : "s"} after the agent`);
	if (opts.ifUnset && action !== "set") throw usage("--if-unset is for notepad set");
	if (opts.ifValue !== undefined && action !== "set" && action !== "delete") throw usage("--if-value is for notepad set and delete");
	if (opts.ifUnset && opts.ifValue !== undefined) throw usage("--if-unset and --if-value cannot both hold: give one");
	const condition: Record<string, string> = opts.ifUnset ? { "if-none-match": "*" } : opts.ifValue !== undefined ? { "if-match": versionOf(opts.ifValue) } : {};
	// The API's 412 names versions (digests of values); --if-value was given a value, so it is said in those terms.
	const saidOfValue = (err: unknown): never => {
		if (opts.ifValue !== undefined && err instanceof ApiError && err.status === 412) {
			// (The API's message quotes the key, which may hold any words: its fixed tail is what is read.)
			const holds = err.message.endsWith(" is not set (If-Match names a version of it); nothing was changed") ? "it is not set" : "it holds another";
			throw new CliError(printable(`notepad key ${JSON.stringify(key)} of ${agent} does not hold the value given to --if-value (${holds}); nothing was changed`), err.exitCode, `drover notepad ${shellWord(agent)} get ${shellWord(key!)} shows what it holds`);
		}
		throw err;
	};
	switch (action) {
		case "list": {
			const notes = await ctx.client.json(base, shapes.notepad);
			if (opts.json) ctx.json(notes);
			else if (Object.keys(notes).length === 0) ctx.out(ctx.p.dim("the notepad is empty"));
			else {
				const rows = Object.entries(notes);
				ctx.out(table(rows, [{ header: "KEY", value: ([k]) => k }, { header: "VALUE", value: ([, v]) => v, shrink: "text", max: 100 }], ctx.p, ctx.width));
			}
			return 0;
		}
		case "get": {
			const note = await ctx.client.json(`${base}/${encodeURIComponent(key!)}`, shapes.note);
			// The value alone, so `$(drover notepad a get k)` gives back what was set. Printable, as all
			// text for a person: control characters (which it may carry from a webhook or a model) show
			// escaped; --json gives the value exactly.
			if (opts.json) ctx.json(note);
			else {
				const shown = printable(note.value);
				process.stdout.write(shown.endsWith("\n") ? shown : `${shown}\n`);
			}
			return 0;
		}
		case "set": {
			const text = value === "-" ? withoutFinalNewline(await readStdin()) : value!;
			const notes = await ctx.client.json(`${base}/${encodeURIComponent(key!)}`, shapes.notepadWith(key!), { method: "PUT", body: { value: text }, headers: condition }).catch(saidOfValue);
			saidSet(ctx, agent, key!, text, notes, opts);
			return 0;
		}
		case "edit":
			return editNote(ctx, agent, key!, opts);
		default: {
			const result = await ctx.client.json(`${base}/${encodeURIComponent(key!)}`, shapes.deleted, { method: "DELETE", headers: condition }).catch(saidOfValue);
			if (opts.json) ctx.json(result);
			else ctx.out(printable(`deleted ${key} from ${agent}'s notepad`));
			return 0;
		}
	}
}

/** A write's answer, said. The API stores what it was given redacted (an API key becomes "sk-ant-…[REDACTED]"), with invisible characters stripped: said too, or `get` later gives back something else unannounced. */
function saidSet(ctx: Context, agent: string, key: string, text: string, notes: Record<string, string>, opts: NotepadOptions): void {
	const stored = notes[key];
	if (stored !== undefined && stored !== text) {
		const how = stored.includes("[REDACTED]") && !text.includes("[REDACTED]") ? "redacted (it looked like a secret)" : "altered (invisible characters stripped)";
		ctx.err(ctx.ep.yellow(`drover: warning: ${printable(key)} was stored ${how}, not as sent: ${truncate(stored, 120)}`));
	}
	if (opts.json) ctx.json(notes);
	else ctx.out(printable(`set ${key} on ${agent}'s notepad (${Object.keys(notes).length} key${Object.keys(notes).length === 1 ? "" : "s"})`));
}

/**
 * A key's value in $VISUAL or $EDITOR (a key not set yet opens empty), saved as a change to the
 * value it was read at (If-Match; If-None-Match: * for a new key): one someone changed meanwhile is
 * refused, and the edit kept in its file, named. The file holds the value and one newline, which
 * editors add and which is dropped again, so a value's own last newline survives the round trip.
 */
async function editNote(ctx: Context, agent: string, key: string, opts: NotepadOptions): Promise<number> {
	requireEditor(ctx, "drover notepad edit", `drover notepad ${shellWord(agent)} set ${shellWord(key)} <value|-> (with --if-value or --if-unset to guard it)`);
	const base = `/v1/agents/${encodeURIComponent(agent)}/notepad`;
	const path = `${base}/${encodeURIComponent(key)}`;
	let current: string | null;
	try {
		current = (await ctx.client.json(path, shapes.note)).value;
	} catch (err) {
		if (!(err instanceof ApiError) || err.status !== 404) throw err;
		// The agent's 404 too: told apart by asking for its notepad, which is a 404 only without an agent.
		await ctx.client.json(base, shapes.notepad);
		current = null;
	}
	const original = current ?? "";
	const name = `${key.replace(/[^\w.-]+/gu, "_").slice(0, 60) || "value"}.txt`;
	return inEditFile(name, original, withoutFinalNewline, async (file) => {
		await writeFile(file, `${original}\n`);
		await runEditor(file);
		const edited = withoutFinalNewline(await readFile(file, "utf8"));
		if (edited === "" && current !== "") {
			ctx.err(`edit cancelled: the file was left empty; nothing changed (to delete the key: drover notepad ${printable(agent)} delete ${printable(key)})`);
			return 0;
		}
		if (edited === original && current !== null) {
			ctx.err(`${printable(key)} unchanged: nothing was sent`);
			return 0;
		}
		const condition: Record<string, string> = current === null ? { "if-none-match": "*" } : { "if-match": versionOf(current) };
		const notes = await ctx.client.json(path, shapes.notepadWith(key), { method: "PUT", body: { value: edited }, headers: condition });
		saidSet(ctx, agent, key, edited, notes, opts);
		return 0;
	});
}
