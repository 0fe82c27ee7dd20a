import type { Command } from "commander";
import { CliError } from "../client.ts";
import { act, pathSegment, type Context } from "../context.ts";
import { printable, table, truncate } from "../format.ts";
import { shapes } from "../shapes.ts";
import { readStdin } from "../stdin.ts";

const ACTIONS = ["list", "get", "set", "delete"] as const;

export function registerNotepad(program: Command): void {
	program
		.command("notepad")
		.description("an agent's notepad, rendered into its next prompts: list | get <key> | set <key> <value> | delete <key>")
		.argument("<agent>", "agent name", pathSegment)
		.argument("[action]", `one of ${ACTIONS.join(", ")}`, "list")
		.argument("[key]", "notepad key (at most 128 characters)", pathSegment)
		.argument("[value]", 'for set: the value ("-" reads it from stdin, dropping one trailing newline, \\n or \\r\\n, as $(...) does)')
		.option("--json", "print the API's JSON")
		.action(act(notepad));
}

async function notepad(ctx: Context, agent: string, action: string, typed: string | undefined, value: string | undefined, opts: { json?: boolean }): Promise<number> {
	// The API stores keys NFC, and answers a write with the key so: sent as typed (a decomposed "é"
	// pasted from a file name), the key would not be in the answer that must hold it.
	const key = typed?.normalize("NFC");
	const base = `/v1/agents/${encodeURIComponent(agent)}/notepad`;
	const usage = (message: string) => new CliError(message, 2, "drover notepad <agent> list | get <key> | set <key> <value> | delete <key>");
	if (!(ACTIONS as readonly string[]).includes(action)) throw usage(`unknown notepad action ${JSON.stringify(action)}`);
	const expected = action === "list" ? 0 : action === "set" ? 2 : 1;
	const given = [key, value].filter((x) => x !== undefined).length;
	if (given !== expected) throw usage(`notepad ${action} takes ${expected === 0 ? "no" : expected} argument${expected === 1 ? "" : "s"} after the agent`);
	switch (action) {
		case "list": {
			const notes = await ctx.client.json(base, shapes.notepad);
			if (opts.json) ctx.json(notes);
			else if (Object.keys(notes).length === 0) ctx.out(ctx.p.dim("the notepad is empty"));
			else {
				const rows = Object.entries(notes);
				ctx.out(table(rows, [{ header: "KEY", value: ([k]) => k }, { header: "VALUE", value: ([, v]) => v, flexible: true, max: 100 }], ctx.p, ctx.width));
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
			const notes = await ctx.client.json(`${base}/${encodeURIComponent(key!)}`, shapes.notepadWith(key!), { method: "PUT", body: { value: text } });
			// The API stores what it was given redacted (an API key becomes "sk-ant-…[REDACTED]"), with
			// invisible characters stripped: say so, or `get` later gives back something else unannounced.
			const stored = notes[key!];
			if (stored !== undefined && stored !== text) {
				const how = stored.includes("[REDACTED]") && !text.includes("[REDACTED]") ? "redacted (it looked like a secret)" : "altered (invisible characters stripped)";
				ctx.err(ctx.ep.yellow(`drover: warning: ${printable(key!)} was stored ${how}, not as sent: ${truncate(stored, 120)}`));
			}
			if (opts.json) ctx.json(notes);
			else ctx.out(printable(`set ${key} on ${agent}'s notepad (${Object.keys(notes).length} key${Object.keys(notes).length === 1 ? "" : "s"})`));
			return 0;
		}
		default: {
			const result = await ctx.client.json(`${base}/${encodeURIComponent(key!)}`, shapes.deleted, { method: "DELETE" });
			if (opts.json) ctx.json(result);
			else ctx.out(printable(`deleted ${key} from ${agent}'s notepad`));
			return 0;
		}
	}
}

/**
 * `echo value | drover notepad a set k -` means "value", not "value\n": exactly one trailing
 * newline (\n or \r\n) goes, the one `echo` or a file's last line ends with. Only one ($(...)
 * drops them all), so a value that ends in a blank line on purpose keeps it.
 */
function withoutFinalNewline(text: string): string {
	return text.replace(/\r?\n$/, "");
}
