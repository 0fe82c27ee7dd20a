/** The C1 and bidirectional controls, as a character class's body: escaped by `printable` and in log lines (src/log.ts). */
export const C1_AND_BIDI = "\\u0080-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069";

/**
 * What `printable` escapes: every C0 control but \n and \t, DEL, every C1 control (U+0080–U+009F),
 * and the bidirectional controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), which
 * reorder the text around them ("safe \u202eexe.txt" would read as "safe txt.exe"). The same set as
 * the dashboard's (src/dashboard/client/format.client.js).
 */
const UNPRINTABLE = new RegExp(`[\\x00-\\x08\\x0b-\\x1f\\x7f${C1_AND_BIDI}]`, "g");

/**
 * Text from outside drover's own code (the model's answers, tool results, webhook payloads, notepad
 * values, agent names, the API's error messages) made safe for a terminal: each character of
 * UNPRINTABLE becomes a visible escape, \x and two hex digits below U+0100, else \u and four, as
 * the dashboard shows them. "\x1b[2J" then prints as the text `\x1b[2J` instead of clearing the
 * screen, "\x1b]0;title\x07" sets no window title, and U+202E shows as `\u202e` instead of
 * reversing what follows. In the CLI, the one sanitizer of human-readable output: applied to the data
 * before it is styled (drover's own colours are escape codes too, added after), never to --json
 * output, which is the API's JSON as JSON.stringify writes it. A job's plain-text log (output.log)
 * is written through it too, since it is read with cat and less.
 */
export function printable(text: string): string {
	return text.replace(UNPRINTABLE, (c) => {
		const code = c.charCodeAt(0);
		return code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
	});
}

