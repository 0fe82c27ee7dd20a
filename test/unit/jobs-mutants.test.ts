// Pure modules of src/jobs and src/delivery where a mutation walk found the suite blind: each case
// passed on a single mutation of the module and fails on it (the walk's labels in brackets).
import { describe, expect, it } from "vitest";
import { createJob, isJobId, JobInvariantError, transition } from "../../src/jobs/model.ts";
import { outputLogEntry } from "../../src/jobs/output-text.ts";
import { toHerdctlYaml } from "../../src/jobs/yaml.ts";
import { failedCallsWord } from "../../src/jobs/tool-call-words.ts";
import { formatQueued, queuedDelivery } from "../../src/delivery/queued.ts";
import { markdownToMrkdwn } from "../../src/delivery/mrkdwn.ts";

const at = "2026-12-02T09:00:05.000Z";
const entry = (line: unknown) => outputLogEntry(JSON.stringify(line));

describe("a refused transition's reason", () => {
	it("says a job is already in the status it was asked to enter [mo23]", () => {
		const running = transition(createJob({ agent: "a", trigger_type: "manual", definition_revision: "r" }, new Date(at)), "running", { reason: "start", at: new Date(at) });
		expect(() => transition(running, "running", { reason: "again", at: new Date(at) })).toThrow(JobInvariantError);
		expect(() => transition(running, "running", { reason: "again", at: new Date(at) })).toThrow(/cannot go from running to running: it is already running$/);
	});
});

describe("outputLogEntry (herdctl's plain-text output.log) at its edges", () => {
	it("leaves an empty status or exit reason out of a system line's brackets [ot04]", () => {
		expect(entry({ timestamp: at, type: "system", subtype: "status", content: "job ended", status: "cancelled", exit_reason: "" })).toBe(`${at} system:status job ended (cancelled)`);
	});

	it("takes a tool result without success: true for an error, and shows its result where it has no error [ot05, ot06]", () => {
		expect(entry({ timestamp: at, type: "tool_result", tool_use_id: "t1", result: "HTTP 503" })).toBe(`${at} tool_result t1 error HTTP 503`);
		expect(entry({ timestamp: at, type: "tool_result", tool_use_id: "t1", success: false, result: "denied by operator" })).toBe(`${at} tool_result t1 error denied by operator`);
	});

	it("shows a tool call without a name as ?, and one without input as null [ot07, ot10]", () => {
		expect(entry({ timestamp: at, type: "tool_use", tool_use_id: "t2" })).toBe(`${at} tool_use ? t2 null`);
	});

	it("says a line was cut only where it says how long it was [ot11]", () => {
		expect(entry({ timestamp: at, type: "assistant", content: "abc", truncated: { field: "content" } })).toBe(`${at} assistant abc`);
	});

	it("writes a line that is a JSON array as it is, not as a typeless entry [ot08]", () => {
		expect(outputLogEntry('["a",1]')).toBe('["a",1]');
	});
});

describe("a job in herdctl's YAML layout", () => {
	it("has herdctl's fields in herdctl's order, and nothing else [ya04]", () => {
		const job = createJob({ agent: "a", trigger_type: "manual", definition_revision: "r" }, new Date(at));
		const keys = toHerdctlYaml(job).split("\n").filter((l) => /^[a-z_]+:/.test(l)).map((l) => l.slice(0, l.indexOf(":")));
		expect(keys).toEqual(["id", "agent", "schedule", "trigger_type", "status", "exit_reason", "session_id", "forked_from", "started_at", "finished_at", "duration_seconds", "prompt", "summary", "output_file", "usage"]);
	});
});

describe("a job id's date", () => {
	it("is read as written for years 0 to 99 too, not as 1900 to 1999 [if05]", () => {
		// Year 0 is a leap year, 1900 is not: Date.UTC's reading would refuse the first and take nothing in it.
		expect(isJobId("job-0000-02-29-abcdef")).toBe(true);
		expect(isJobId("job-0099-12-31-abcdef")).toBe(true);
		expect(isJobId("job-0001-02-29-abcdef")).toBe(false);
	});
});

describe("the tool-call tally's failed calls, in words (the CLI's and the dashboard's)", () => {
	it("are that call cut off for one in an indeterminate job, failed or cut off for more or a cancelled one, else failed [tw01, tw02]", () => {
		expect(failedCallsWord("indeterminate", 1)).toBe("cut off, effect unknown");
		expect(failedCallsWord("indeterminate", 2)).toBe("failed or cut off");
		expect(failedCallsWord("cancelled", 1)).toBe("failed or cut off");
		expect(failedCallsWord("completed", 1)).toBe("failed");
		expect(failedCallsWord("failed", 2)).toBe("failed");
	});
});

describe("a queued delivery's answer at README's 200,000 units", () => {
	const job = { id: "job-2026-11-30-k2x9qa", agent: "digest", schedule: null, trigger_type: "manual", status: "completed", finished_at: "2026-11-30T09:01:12.000Z", summary: null, usage: { per_model: {}, num_turns: 1, total_cost_usd: null } };
	const lastSection = (answer: string): string => {
		const slack = JSON.parse(formatQueued("slack", queuedDelivery({ agent: "digest", job, answer }).body, null).body) as { blocks: { type: string; text?: { text: string } }[] };
		return slack.blocks.filter((b) => b.type === "section").at(-1)!.text!.text;
	};

	it("is kept whole at 200,000 and cut past it, which Slack says though its blocks would hold the rest [qu01]", () => {
		// Markdown that shrinks as mrkdwn (**b** is *b*): Slack's blocks would hold all of it.
		const whole = `${"**b** ".repeat(33_333)}b.`;
		expect(whole).toHaveLength(200_000);
		expect(lastSection(whole)).not.toContain("answer truncated");
		expect(lastSection(`${whole}c`)).toBe("_…answer truncated. The full answer is in job `job-2026-11-30-k2x9qa`'s output._");
	});
});

describe("markdownToMrkdwn at its edges", () => {
	it("takes a line of #s alone for an empty heading, shown as an empty line [mk03]", () => {
		expect(markdownToMrkdwn("a\n#\nb\n###")).toBe("a\n\nb\n");
	});

	it("drops a heading's closing #s after a space or a tab, and a heading of closing #s alone is empty [mk14, mk15]", () => {
		expect(markdownToMrkdwn("# Title\t##")).toBe("*Title*");
		expect(markdownToMrkdwn("a\n# ##\nb")).toBe("a\n\nb");
	});

	it("leaves __ inside a word as written: no bold in snake__case__names [mk24]", () => {
		expect(markdownToMrkdwn("a__b__c and __d__")).toBe("a__b__c and *d*");
	});

	it("spaces a marker from full-width punctuation touching it, as from a letter [mk30]", () => {
		expect(markdownToMrkdwn("（**注意**）")).toBe("（\u200b*注意*\u200b）");
	});

	it("starts a code span only at a backtick run's first backtick and ends it at a run of its length (CommonMark) [mk31]", () => {
		expect(markdownToMrkdwn("``*a*`")).toBe("``_a_`");
	});

	it("takes ___ for a rule, as --- and *** [mk04]", () => {
		expect(markdownToMrkdwn("a\n___\nb")).toBe("a\n───\nb");
	});

	it("links an http(s) URL whatever the case of its scheme [mk06]", () => {
		expect(markdownToMrkdwn("[docs](HTTPS://x.example.test/a)")).toBe("<HTTPS://x.example.test/a|docs>");
	});

	it("reads a backtick fence whose info string holds a backtick as text, not a block (CommonMark) [mk09]", () => {
		expect(markdownToMrkdwn("```foo`bar\n*x*")).toBe("```foo`bar\n_x_");
	});

	it("closes a block only at a fence as long as its opening one: a shorter one inside it is its text [mk10]", () => {
		expect(markdownToMrkdwn("````\n```\ninside *x*\n````\nafter")).toBe("```\n``\u200b`\ninside *x*\n```\nafter");
	});

	it("leaves no run of three backticks in a block's line, however long the run it quotes [mk12]", () => {
		const out = markdownToMrkdwn("~~~\n`````\n~~~");
		expect(out).toBe("```\n``\u200b``\u200b`\n```");
		expect(out.split("\n")[1]).not.toContain("```");
	});
});
