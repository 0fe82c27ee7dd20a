import { isCollection, isMap, isNode, isScalar, LineCounter, parseDocument, Parser, visit, type CST, type Document, type DocumentOptions, type ParseOptions, type YAMLError } from "yaml";

type Token = CST.Token;

/** Something a YAML file may not use in drover, at its line and column (1-based). */
export interface YamlProblem {
	line: number;
	col: number;
	message: string;
}

/**
 * Parses fleet.yaml, or a file `drover apply` reads, as YAML 1.2 whatever the file says. Left to
 * itself the parser lets a `%YAML 1.1` directive pick 1.1, where `enabled: no` is false, `010` is 8
 * and `<<` merges maps, while the same file without it reads `no` as a string and `<<` as a key
 * named "<<". Both are refused instead, each at its line: the file means one thing.
 */
export function parseYaml12(text: string, options: ParseOptions & DocumentOptions = {}): { doc: Document.Parsed; problems: YamlProblem[]; lineCounter: LineCounter; text: string } {
	const lineCounter = new LineCounter();
	// Source tokens kept: they tell a flow collection closed by its bracket from one left open (openedAt).
	const doc = parseDocument(text, { ...options, version: "1.2", merge: false, lineCounter, keepSourceTokens: true });
	const problems: YamlProblem[] = [];
	const at = (offset: number, message: string) => problems.push({ ...lineCounter.linePos(offset), message });
	// From the parser's tokens: a version the library does not know (1.3) is only a warning there.
	for (const token of new Parser().parse(text)) {
		if (token.type !== "directive" || !/^%YAML[ \t]/.test(token.source)) continue;
		const version = token.source.split(/[ \t]+/)[1];
		if (version !== "1.2") {
			at(token.offset, `%YAML ${version}: drover reads YAML 1.2 only (under 1.1, no would be false, 010 eight and << a merge); remove the directive`);
		}
	}
	visit(doc, {
		Pair(_, pair) {
			// Only a plain << is a merge key; a quoted "<<" is an ordinary key (and refused as unknown).
			if (isScalar(pair.key) && pair.key.source === "<<" && pair.key.type === "PLAIN" && pair.key.range) {
				at(pair.key.range[0], "merge keys (<<) are not supported: write the keys out (anchors and aliases of whole values work)");
			}
		},
	});
	return { doc, problems, lineCounter, text };
}

/**
 * Where the quoted string or flow collection that an error says is not closed was opened. The
 * parser notices only where the text ends or a later line cannot belong to it, so its own
 * position is lines past the mistake (the file's last line, for a quote never closed).
 */
function openedAt(doc: Document.Parsed, error: YAMLError): number | undefined {
	const message = error.message;
	const quote = error.code === "MISSING_CHAR" && /^Missing closing .?quote/.test(message);
	if (!quote && !/^Flow (sequence|map) .*end with a [\]}]/.test(message)) return undefined;
	const at = error.pos[0];
	let start: number | undefined;
	visit(doc, {
		// The innermost still open at the error. A closed one inside may end exactly there too (the
		// file ending at its bracket), so a collection is taken only without its closing bracket.
		Node(_, node) {
			if (!node.range || node.range[0] > at || at > node.range[1]) return;
			if (quote ? isScalar(node) && (node.type === "QUOTE_DOUBLE" || node.type === "QUOTE_SINGLE") : isCollection(node) && node.flow && !closedFlow(node.srcToken)) start = node.range[0];
		},
	});
	return start;
}

const closedFlow = (token: Token | undefined) => token?.type === "flow-collection" && token.end.some((t) => t.type === "flow-seq-end" || t.type === "flow-map-end");

/**
 * Every reason a parsed file cannot be read, each at its line and column where the parser knew it:
 * its syntax errors (the first line of the library's message, the position moved out of it: the rest
 * is a code frame; an unclosed quote or bracket at its opening) and what drover refuses
 * (parseYaml12's problems).
 */
export function unreadable({ doc, problems, lineCounter, text }: ReturnType<typeof parseYaml12>): { line?: number; col?: number; message: string }[] {
	const faults: { line?: number; col?: number; message: string }[] = [];
	const said = new Set<string>();
	for (const e of doc.errors) {
		const message = (e.message.split("\n")[0] ?? "").replace(/ at line \d+, column \d+:?$/, "");
		const opened = openedAt(doc, e);
		let fault: { line?: number; col?: number; message: string };
		if (opened !== undefined && e.linePos) {
			const until = e.pos[0] >= (doc.range?.[2] ?? Number.POSITIVE_INFINITY) ? "the end of the text" : `line ${e.linePos[0].line}`;
			fault = { ...lineCounter.linePos(opened), message: `${message}: opened here and still open at ${until}` };
		} else {
			fault = { ...e.linePos?.[0], ...plainly(e, message, text, lineCounter) };
		}
		// A line's one mistake can make several errors (an unquoted cron, one an asterisk): said once.
		const key = `${fault.line}:${fault.message}`;
		if (said.has(key)) continue;
		said.add(key);
		faults.push(fault);
	}
	return [...faults, ...problems];
}

/**
 * The parser's words for a mistake it cannot name, with what the writer most likely meant, for the
 * few that first-time fleet.yaml writers make: an unquoted value that begins with "*" (a cron: YAML
 * reads it as an alias), a value holding ": " (read as a nested key), a second document.
 */
function plainly(e: YAMLError, message: string, text: string, lineCounter: LineCounter): { line?: number; col?: number; message: string } {
	const line = e.linePos?.[0].line;
	const start = line === undefined ? undefined : lineCounter.lineStarts[line - 1];
	const end = start === undefined ? -1 : text.indexOf("\n", start);
	const source = start === undefined ? "" : text.slice(start, end === -1 ? undefined : end);
	const value = /^(\s*(?:-\s+)?(?:[^\s:#][^:#]*:\s+|-\s+))(\*.*)$/.exec(source);
	if (value && (e.code === "BAD_ALIAS" || /\b(alias|scalar) at node end\b/.test(message))) {
		const [, lead = "", rest = ""] = value;
		return { col: lead.length + 1, message: `${rest.trim()} begins with "*", which YAML reads as an alias: quote it ("${rest.trim().replace(/"/g, '\\"')}")` };
	}
	if (e.code === "BLOCK_AS_IMPLICIT_KEY") return { message: `${message}: a value holding ": " must be quoted (as prompt: "Note: check this")` };
	if (e.code === "MULTIPLE_DOCS") return { message: 'the text holds more than one YAML document (a "---" line between them): write one (fleet.yaml: one agents: list)' };
	return { message };
}

/** Where in the YAML text the value at a schema path was written (its key, for an issue of the key): its deepest part the text has. */
function positionOf(doc: Document.Parsed, lineCounter: LineCounter, path: readonly PropertyKey[], isKey: boolean): { line: number; column: number } | undefined {
	const at = (node: unknown) => (isNode(node) && node.range ? lineCounter.linePos(node.range[0]) : undefined);
	if (isKey && path.length > 0) {
		const parent: unknown = path.length === 1 ? doc.contents : doc.getIn(path.slice(0, -1) as unknown[], true);
		const key = isMap(parent) ? parent.items.find((pair) => isScalar(pair.key) && pair.key.value === path.at(-1))?.key : undefined;
		const pos = at(key);
		if (pos) return { line: pos.line, column: pos.col };
	}
	for (let depth = path.length; depth >= 0; depth--) {
		const pos = at(depth === 0 ? doc.contents : doc.getIn(path.slice(0, depth) as unknown[], true));
		if (pos) return { line: pos.line, column: pos.col };
	}
	return undefined;
}

/** Where each schema path of a parsed text was written: issuesOf's `at`, for issues that say their line. */
export function positionIn({ doc, lineCounter }: ReturnType<typeof parseYaml12>): (path: readonly PropertyKey[], isKey: boolean) => { line: number; column: number } | undefined {
	return (path, isKey) => positionOf(doc, lineCounter, path, isKey);
}
