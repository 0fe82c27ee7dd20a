import { yamlText } from "../shared/yaml-text.ts";
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
	// An instant is quoted as herdctl writes it: bare, YAML 1.1 readers (PyYAML, Ruby's Psych) load an
	// ISO instant as a date object, not the string herdctl's scripts compare and parse. Written under
	// YAML 1.1's schema so the same goes for every other string such a reader would take for another
	// type: an agent named on, a prompt of yes, an answer of No or 12:30 (false, 750 there).
	return yamlText(layout, (text) => ISO_INSTANT.test(text), "1.1");
}

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}(?:[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}(?::?\d{2})?)?)?$/;
