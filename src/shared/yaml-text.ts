import { Document, visit } from "yaml";

/**
 * Characters the yaml library writes raw, which the YAML then shows as escapes instead: the
 * bidirectional controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), which it writes in
 * any style and which reorder the text around them where the YAML is read ("safe\u202etxt.exe"
 * shows as "safeexe.txt"), and DEL and the C1 controls, which it double-quotes but leaves raw (most
 * of C1 is not even printable YAML). The same set and escapes as the CLI's printableYaml.
 */
const SHOWN_ESCAPED = /[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
const SHOWN_ESCAPED_ALL = new RegExp(SHOWN_ESCAPED.source, "g");
const MERGE_TAG = "tag:yaml.org,2002:merge";

/**
 * A value as YAML that is safe to show and reads back as the same value: a string holding a
 * character of SHOWN_ESCAPED (or one `quote` names) is double-quoted, so the escapes put in its
 * place are YAML's own. Never folded (lineWidth 0), so a long prompt stays one line per line.
 * `version` "1.1" also quotes every string a YAML 1.1 reader would resolve to another type (yes, no,
 * on and off, 12:30, 1_000, 0b101, a date, and = and <<): the text reads back the same under 1.1 and 1.2.
 */
export function yamlText(value: unknown, quote: (text: string) => boolean = () => false, version: "1.1" | "1.2" = "1.2"): string {
	// YAML 1.1's = and << (PyYAML resolves them to !!value and !!merge, of which its loaders can make
	// no value: the whole document fails to load) are quoted too. The library's 1.1 schema writes a
	// string << as its merge key, plain, whatever the style asked: without that tag it is a string.
	const yaml11 = version === "1.1";
	const doc = yaml11 ? new Document(value, { version, customTags: (tags) => tags.filter((t) => typeof t === "string" || t.tag !== MERGE_TAG) }) : new Document(value, { version });
	const quoted = (text: string) => SHOWN_ESCAPED.test(text) || quote(text) || (yaml11 && (text === "=" || text === "<<"));
	visit(doc, {
		Scalar(_key, node) {
			if (typeof node.value === "string" && quoted(node.value)) node.type = "QUOTE_DOUBLE";
		},
	});
	// Every string holding one is double-quoted, so each occurrence left in the text is inside double
	// quotes, where \u202e is the escape of U+202E: the text reads back the same.
	return doc.toString({ lineWidth: 0 }).replace(SHOWN_ESCAPED_ALL, (c) => {
		const code = c.charCodeAt(0);
		return code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
	});
}
