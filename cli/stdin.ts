import { createInterface } from "node:readline/promises";

/**
 * All of stdin, read asynchronously to its end. readFileSync(0) throws EAGAIN on a non-blocking
 * pipe that has nothing to read yet (`(sleep 1; echo hi) | drover …`, a large value arriving in
 * pieces): the stream waits for each piece instead.
 */
export async function readStdin(): Promise<string> {
	let text = "";
	for await (const chunk of process.stdin.setEncoding("utf8")) text += chunk as string;
	return text;
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
