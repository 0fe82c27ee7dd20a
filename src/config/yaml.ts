import { isScalar, LineCounter, parseDocument, Parser, visit, type Document, type ParseOptions, type DocumentOptions } from "yaml";

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
export function parseYaml12(text: string, options: ParseOptions & DocumentOptions = {}): { doc: Document.Parsed; problems: YamlProblem[]; lineCounter: LineCounter } {
	const lineCounter = new LineCounter();
	const doc = parseDocument(text, { ...options, version: "1.2", merge: false, lineCounter });
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
	return { doc, problems, lineCounter };
}

/**
 * Every reason a parsed file cannot be read, each at its line and column where the parser knew it:
 * its syntax errors (the first line of the library's message, the position moved out of it: the rest
 * is a code frame) and what drover refuses (parseYaml12's problems).
 */
export function unreadable(doc: Document.Parsed, problems: readonly YamlProblem[]): { line?: number; col?: number; message: string }[] {
	return [
		...doc.errors.map((e) => ({ ...e.linePos?.[0], message: (e.message.split("\n")[0] ?? "").replace(/ at line \d+, column \d+:?$/, "") })),
		...problems,
	];
}
