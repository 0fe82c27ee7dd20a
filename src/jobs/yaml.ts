import { Document, visit } from "yaml";
import type { JobRecord } from "./model.ts";

/** herdctl's job metadata fields, in its order (.herdctl/jobs/<id>.yaml). */
export const HERDCTL_FIELDS = [
	"id",
	"agent",
	"schedule",
	"trigger_type",
	"status",
	"exit_reason",
	"session_id",
	"forked_from",
	"started_at",
	"finished_at",
	"duration_seconds",
	"prompt",
	"summary",
	"output_file",
	"usage",
] as const;

/** A job record in herdctl's YAML layout, field for field, so its tools and scripts read it unchanged. */
export function toHerdctlYaml(job: JobRecord): string {
	const layout = Object.fromEntries(HERDCTL_FIELDS.map((f) => [f, job[f]]));
	const doc = new Document(layout);
	visit(doc, {
		Scalar(_key, node) {
			// An instant is quoted as herdctl writes it: bare, YAML 1.1 readers (PyYAML, Ruby's Psych) load
			// an ISO instant as a date object, not the string herdctl's scripts compare and parse. A string
			// with a character of SHOWN_ESCAPED is quoted so that the escapes below are YAML's own.
			if (typeof node.value === "string" && (ISO_INSTANT.test(node.value) || SHOWN_ESCAPED.test(node.value))) node.type = "QUOTE_DOUBLE";
		},
	});
	// Every string holding one is double-quoted (lineWidth 0: never folded), so each occurrence left in
	// the text is inside double quotes, where \u202e is the escape of U+202E: the text reads back the same.
	return doc.toString({ lineWidth: 0 }).replace(SHOWN_ESCAPED_ALL, (c) => {
		const code = c.charCodeAt(0);
		return code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
	});
}

/**
 * Characters the yaml library writes raw, which the YAML then shows as escapes instead: the
 * bidirectional controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), which it writes in
 * any style and which reorder the text around them where the YAML is read ("safe\u202etxt.exe"
 * shows as "safeexe.txt"), and DEL and the C1 controls, which it double-quotes but leaves raw (most
 * of C1 is not even printable YAML). The same set and escapes as the CLI's printableYaml.
 */
const SHOWN_ESCAPED = /[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
const SHOWN_ESCAPED_ALL = new RegExp(SHOWN_ESCAPED.source, "g");

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}(?:[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}(?::?\d{2})?)?)?$/;
