import { createInterface } from "node:readline/promises";
import { decodeUtf8, notUtf8, saveAsUtf8 } from "../src/shared/well-formed.ts";
import { CliError } from "./client.ts";

/**
 * All of stdin, read asynchronously to its end. readFileSync(0) throws EAGAIN on a non-blocking
 * pipe that has nothing to read yet (`(sleep 1; echo hi) | drover …`, a large value arriving in
 * pieces): the stream waits for each piece instead.
 */
export async function readStdin(): Promise<string> {
	const chunks: Buffer[] = [];
	for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
	return utf8Text(Buffer.concat(chunks), "stdin");
}

/**
 * `echo value | drover notepad a set k -` means "value", not "value\n" (and a prompt piped to
 * `sessions resume` alike): exactly one trailing newline (\n or \r\n) goes, the one `echo` or a
 * file's last line ends with. Only one ($(...) drops them all), so a text that ends in a blank line
 * on purpose keeps it.
 */
export function withoutFinalNewline(text: string): string {
	return text.replace(/\r?\n$/, "");
}

/**
 * Bytes read as UTF-8, or a CliError saying where they are not: decoded leniently, a Latin-1 "é"
 * became U+FFFD and was sent and stored so, where the API refuses such bytes sent to it directly.
 */
export function utf8Text(bytes: Uint8Array, source: string): string {
	const text = decodeUtf8(bytes, source);
	if (typeof text === "string") return text;
	throw new CliError(notUtf8(source, text), 1, saveAsUtf8(text));
}

/** A yes/no question on the terminal; only "y" or "yes" is a yes. */
export async function confirm(question: string): Promise<boolean> {
	// Asked on stderr so stdout stays clean for whatever a script reads from it.
	const rl = createInterface({ input: process.stdin, output: process.stderr });
	try {
		return /^y(es)?$/i.test((await rl.question(question)).trim());
	} finally {
		rl.close();
	}
}
