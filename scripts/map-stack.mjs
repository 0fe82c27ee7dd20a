// Maps the stack traces in drover's log lines back to its TypeScript source.
//
// The deployed bundle is minified. Cloudflare remaps an uncaught exception's trace with the
// uploaded source map, but drover catches its errors and logs each as one JSON line whose `stack`
// is plain text, which nothing remaps: `at uS (index.js:1:46637)`. This reads log lines (or bare
// stacks) on stdin and prints each stack with its frames mapped through the bundle's source map,
// the one `npm run check` and `npm run deploy` leave at dist/index.js.map (rebuilt at the same
// commit, the bundle and its map are the same bytes).
//
//   npx wrangler tail --format json | npm run --silent stack
//   pbpaste | npm run --silent stack -- --map path/to/index.js.map
import { readFileSync } from "node:fs";
import { SourceMap } from "node:module";
import path from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { map: { type: "string", default: "dist/index.js.map" } } });
let map;
try {
	map = new SourceMap(JSON.parse(readFileSync(values.map, "utf8")));
} catch (err) {
	console.error(`cannot read the source map ${values.map}: ${err.message}\nRun \`npm run check\` at the deployed commit to build it, or pass --map.`);
	process.exit(2);
}
const mapDir = path.dirname(path.resolve(values.map));

// A V8 frame in the bundle: "at [async ]name (…/index.js:12:345)" or "at [async ]…/index.js:12:345".
const FRAME = /at (?:(?<name>[^()\n]+?) \()?(?<async>async )?(?:[^\s()]*\/)?index\.js:(?<line>\d+):(?<column>\d+)\)?/g;

/**
 * One frame, mapped; unchanged where the map has nothing for the position. The frame's function
 * name is the minified one and the map names only the identifier at the call, not the function it
 * sits in, so the source position stands alone (with "async" kept).
 */
function mapFrame(whole, { name, async, line, column }) {
	const origin = map.findOrigin(Number(line), Number(column));
	if (!origin || !origin.fileName) return whole;
	const file = path.relative(process.cwd(), path.resolve(mapDir, origin.fileName));
	return `at ${async || name?.startsWith("async ") ? "async " : ""}${file}:${origin.lineNumber}:${origin.columnNumber}`;
}

const mapStack = (stack) => stack.replace(FRAME, (whole, ...args) => mapFrame(whole, args.at(-1)));

// One JSON value a line (drover's own log lines), or values spread over lines (`wrangler tail
// --format json` indents each event): lines are gathered until they parse.
let pending = "";
for await (const line of createInterface({ input: process.stdin })) {
	pending = pending === "" ? line : `${pending}\n${line}`;
	let entry;
	try {
		entry = JSON.parse(pending);
	} catch {
		// An object or array still open waits for its next line; anything else is text.
		if (/^\s*[[{]/.test(pending)) continue;
		console.log(mapStack(pending));
		pending = "";
		continue;
	}
	pending = "";
	print(entry);
}
if (pending !== "") console.log(mapStack(pending));

function print(entry) {
	// `wrangler tail --format json` wraps each console line in an event with its logs.
	const lines = Array.isArray(entry?.logs) ? entry.logs.flatMap((l) => l.message ?? []).map((m) => (typeof m === "string" ? safeParse(m) : m)) : [entry];
	for (const e of lines) {
		if (e === null || typeof e !== "object") {
			console.log(mapStack(String(e)));
			continue;
		}
		const { stack, ...rest } = e;
		console.log(JSON.stringify(rest));
		if (typeof stack === "string") console.log(mapStack(stack));
	}
}

function safeParse(text) {
	try {
		return JSON.parse(text);
	} catch {
		return { message: text };
	}
}
