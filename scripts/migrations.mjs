// What `npm start` says of the D1 migrations it applied. wrangler draws the table of them all again
// after each one it applies (~400 lines on a first start, for 12): npm start keeps its output, says
// one line when it succeeds, and prints all of it when it fails.

/**
 * The line for a successful `wrangler d1 migrations apply DB --local`, from its output: how many it
 * applied, or null when there was none to apply (every start after the first).
 * @param {string} output  wrangler's stdout and stderr
 * @returns {string | null}
 */
export function migrationsLine(output) {
	if (/No migrations to apply/.test(output)) return null;
	const count = /About to apply (\d+) migration/.exec(output)?.[1];
	const where = "to the local database (.wrangler/state)";
	if (count === undefined) return `[drover] applied the D1 migrations ${where}`;
	return `[drover] applied ${count} D1 migration${count === "1" ? "" : "s"} ${where}`;
}
