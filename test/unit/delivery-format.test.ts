import { describe, expect, it } from "vitest";
import {
	DISCORD_CONTENT_LIMIT,
	SLACK_MAX_BLOCKS,
	SLACK_TEXT_LIMIT,
	escapeSlack,
	formatDelivery,
	formatHook,
	splitForSlack,
	splitMrkdwn,
	type DeliveryInput,
} from "../../src/delivery/format.ts";
import { markdownToMrkdwn } from "../../src/delivery/mrkdwn.ts";
import { WEBHOOK_BODY_LIMIT } from "../../src/delivery/webhook-body.ts";
import { formatQueued, QUEUED_ANSWER_UNITS, QUEUED_DELIVERY, queuedDelivery } from "../../src/delivery/queued.ts";
import { clip, graphemeEnd } from "../../src/shared/clip.ts";

const job = {
	id: "job-2026-11-30-k2x9qa",
	agent: "daily-digest",
	schedule: "morning",
	trigger_type: "schedule",
	status: "completed",
	finished_at: "2026-11-30T09:01:12.000Z",
	summary: "3 PRs merged",
	usage: { per_model: {}, num_turns: 2, total_cost_usd: 0.01 },
};
const input = (answer: string, over: Partial<DeliveryInput> = {}): DeliveryInput => ({ agent: "daily-digest", job, answer, ...over });
const parse = (target: "webhook" | "slack" | "discord", i: DeliveryInput) => {
	const out = formatDelivery(target, i);
	expect(out.contentType).toBe("application/json");
	return JSON.parse(out.body) as Record<string, any>;
};

type Section = { type: "section"; text: { type: "mrkdwn"; text: string } };
const sections = (payload: Record<string, any>) => (payload.blocks as { type: string }[]).filter((b): b is Section => b.type === "section");

describe("formatDelivery: webhook", () => {
	it("is drover.delivery with the job's fields and the answer", () => {
		expect(parse("webhook", input("All green."))).toEqual({
			type: "drover.delivery",
			agent: "daily-digest",
			job_id: "job-2026-11-30-k2x9qa",
			schedule: "morning",
			trigger_type: "schedule",
			status: "completed",
			finished_at: "2026-11-30T09:01:12.000Z",
			answer: "All green.",
			cut_short: false,
			truncated: false,
		});
	});

	it("keeps nulls, and adds dashboard_url only when there is one", () => {
		const manual = { ...job, schedule: null, trigger_type: "manual", finished_at: null };
		const body = parse("webhook", { agent: "ops", job: manual, answer: "x", dashboardUrl: "https://drover.example.test/jobs/job-2026-11-30-k2x9qa" });
		expect(body).toMatchObject({ schedule: null, finished_at: null, trigger_type: "manual" });
		expect(body.dashboard_url).toBe("https://drover.example.test/jobs/job-2026-11-30-k2x9qa");
		expect(Object.keys(parse("webhook", input("x", { dashboardUrl: null })))).not.toContain("dashboard_url");
	});
});

describe("formatDelivery: webhook, a long answer", () => {
	const bytes = (body: string) => new TextEncoder().encode(body).length;
	const link = "https://drover.example.test/jobs/job-2026-11-30-k2x9qa";

	it(`is cut so the body fits ${WEBHOOK_BODY_LIMIT} bytes, between characters a reader sees as one, said so, the link kept`, () => {
		// Every width JSON and UTF-8 give a unit: quotes and newlines escaped, a control character as \u0001, CJK, emoji, a family, a flag, an accent.
		const unit = 'say "hi"\n\u0001 東京 😀 👨‍👩‍👧‍👦 🇫🇷 e\u0301 ';
		for (const pad of [0, 1, 2, 3, 5, 8, 13]) {
			const answer = "x".repeat(pad) + unit.repeat(8_000);
			const { body } = formatDelivery("webhook", input(answer, { dashboardUrl: link }));
			const sent = JSON.parse(body) as Record<string, unknown>;
			const head = sent.answer as string;
			expect(bytes(body)).toBeLessThanOrEqual(WEBHOOK_BODY_LIMIT);
			// Cut as late as a character allows: a family emoji is the widest, 25 bytes.
			expect(bytes(body)).toBeGreaterThan(WEBHOOK_BODY_LIMIT - 25);
			expect(answer.startsWith(head)).toBe(true);
			expect(graphemeEnd(answer, head.length)).toBe(head.length);
			expect(sent).toMatchObject({ truncated: true, full_answer_chars: [...answer].length, dashboard_url: link, cut_short: false });
		}
	});

	it("is sent whole while the body fits, the answer's notes and all, as truncated: false", () => {
		const fits = (n: number) => (JSON.parse(formatDelivery("webhook", input("é".repeat(n))).body) as { truncated: boolean }).truncated === false;
		let n = 1;
		while (fits(n * 2)) n *= 2;
		for (let step = n / 2; step >= 1; step /= 2) if (fits(n + step)) n += step;
		const whole = JSON.parse(formatDelivery("webhook", input("é".repeat(n))).body) as Record<string, unknown>;
		expect(whole).toMatchObject({ answer: "é".repeat(n), truncated: false });
		expect(whole).not.toHaveProperty("full_answer_chars");
		// The longest answer sent whole fills the body to its last byte or two (é is two).
		expect(bytes(formatDelivery("webhook", input("é".repeat(n))).body)).toBeGreaterThan(WEBHOOK_BODY_LIMIT - 2);
		const cut = JSON.parse(formatDelivery("webhook", input("é".repeat(n + 1))).body) as Record<string, unknown>;
		expect(cut).toMatchObject({ truncated: true, full_answer_chars: n + 1 });
		// An answer cut short at max_tokens still says so when the note that ends it is cut off, and its
		// length is the answer's, as when it is too long to be queued whole: not the note's too.
		const short = JSON.parse(formatDelivery("webhook", input("é".repeat(n), { cutShort: true })).body) as Record<string, unknown>;
		expect(short).toMatchObject({ cut_short: true, truncated: true, full_answer_chars: n });
	});
});

describe("a queued delivery", () => {
	const link = "https://drover.example.test/jobs/job-2026-11-30-k2x9qa";

	it("is formatted when sent as it would have been when queued, the link given then", () => {
		for (const target of ["webhook", "slack", "discord"] as const) {
			for (const over of [{}, { cutShort: true }]) {
				const queued = queuedDelivery(input("**All** green.", over));
				expect(queued.contentType).toBe(QUEUED_DELIVERY);
				expect(formatQueued(target, queued.body, link)).toEqual(formatDelivery(target, input("**All** green.", { ...over, dashboardUrl: link })));
				expect(formatQueued(target, queued.body, null)).toEqual(formatDelivery(target, input("**All** green.", over)));
			}
		}
	});

	it(`keeps ${QUEUED_ANSWER_UNITS} units of a longer answer, well within a row, and every target says the answer is cut`, () => {
		const answer = "a😀 東京 ".repeat(300_000);
		const queued = queuedDelivery(input(answer, { cutShort: true }));
		expect(new TextEncoder().encode(queued.body).length).toBeLessThan(1_000_000);
		const webhook = JSON.parse(formatQueued("webhook", queued.body, link).body) as Record<string, unknown>;
		expect(webhook).toMatchObject({ cut_short: true, truncated: true, full_answer_chars: [...answer].length, dashboard_url: link });
		expect(answer.startsWith(webhook.answer as string)).toBe(true);
		const slack = JSON.parse(formatQueued("slack", queued.body, link).body) as Record<string, any>;
		expect(sections(slack).at(-1)!.text.text).toBe(`_…answer truncated: Slack shows at most ${SLACK_MAX_BLOCKS} blocks. The full answer is <${link}|in drover>._`);
		expect(JSON.stringify(slack)).not.toContain("(cut short at max_tokens)");
		const discord = JSON.parse(formatQueued("discord", queued.body, null).body) as Record<string, any>;
		expect(discord.embeds[0].description).toContain("The answer is cut to 2000 characters");
	});

	it("says a kept head is cut in Slack though its blocks would not fill a message (Markdown that shrinks as mrkdwn)", () => {
		const answer = "**b** ".repeat(QUEUED_ANSWER_UNITS / 5);
		const slack = JSON.parse(formatQueued("slack", queuedDelivery(input(answer)).body, null).body) as Record<string, any>;
		expect(sections(slack).length).toBeLessThan(SLACK_MAX_BLOCKS - 2);
		expect(sections(slack).at(-1)!.text.text).toBe("_…answer truncated. The full answer is in job `job-2026-11-30-k2x9qa`'s output._");
	});
});

describe("formatDelivery: slack", () => {
	it("has the fallback text, a header, the answer as mrkdwn and a context with the job id", () => {
		expect(parse("slack", input("**3** PRs merged."))).toEqual({
			text: "daily-digest: **3** PRs merged.",
			blocks: [
				{ type: "header", text: { type: "plain_text", text: "daily-digest · morning", emoji: true } },
				{ type: "section", text: { type: "mrkdwn", text: "*3* PRs merged." } },
				{ type: "context", elements: [{ type: "mrkdwn", text: "Job `job-2026-11-30-k2x9qa` · schedule · completed" }] },
			],
		});
	});

	it("shows the trigger when there is no schedule, and links the dashboard", () => {
		const body = parse("slack", { agent: "ops", job: { ...job, schedule: null, trigger_type: "manual" }, answer: "ok", dashboardUrl: "https://d.example.test/jobs/x?a=1&b=2" });
		expect(body.blocks[0].text.text).toBe("ops · manual");
		expect(body.blocks.at(-1).elements[0].text).toBe("Job `job-2026-11-30-k2x9qa` · manual · completed · <https://d.example.test/jobs/x?a=1&amp;b=2|Open in drover>");
	});

	it("escapes &, < and > (so <!channel> and fake links stay text), in the blocks and the fallback", () => {
		const answer = "a < b && c > d: <!channel> <@U123> <!subteam^S1> <https://evil.example.test|click> **bold** _it_ `<!here>` \"q\" 'q'";
		const escaped = "a &lt; b &amp;&amp; c &gt; d: &lt;!channel&gt; &lt;@U123&gt; &lt;!subteam^S1&gt; &lt;https://evil.example.test|click&gt; **bold** _it_ `&lt;!here&gt;` \"q\" 'q'";
		const body = parse("slack", input(answer));
		expect(sections(body).map((s) => s.text.text)).toEqual([escaped.replace("**bold**", "*bold*")]);
		expect(body.text).toBe(`daily-digest: ${escaped}`);
		expect(escapeSlack("&amp;")).toBe("&amp;amp;"); // the answer's own text, shown literally
	});

	it("limits the fallback text to the first 300 characters of the answer", () => {
		const answer = "word ".repeat(200);
		const body = parse("slack", input(answer));
		expect(body.text).toBe(`daily-digest: ${answer.slice(0, 300)}…`);
	});

	it("splits a 10,000-character answer into sections of at most 3000 characters, in order", () => {
		const paragraphs = Array.from({ length: 40 }, (_, i) => `Paragraph ${i}: ${"lorem <ipsum> & dolor ".repeat(10)}`.slice(0, 248));
		const answer = paragraphs.join("\n\n").slice(0, 10_000).padEnd(10_000, "z");
		expect(answer).toHaveLength(10_000);
		const body = parse("slack", input(answer));
		const texts = sections(body).map((s) => s.text.text);
		expect(texts.length).toBeGreaterThan(3);
		for (const text of texts) {
			expect(text.length).toBeGreaterThan(0);
			expect(text.length).toBeLessThanOrEqual(SLACK_TEXT_LIMIT);
		}
		expect(texts.join("")).toBe(escapeSlack(answer));
		// Escaping grew the text past 10,000; no entity was cut in two at a boundary.
		for (const text of texts) expect(text).not.toMatch(/&(?:a|am|amp|l|lt|g|gt)?$/);
		expect(body.blocks[0].type).toBe("header");
		expect(body.blocks.at(-1).type).toBe("context");
	});

	it("hard-cuts text without spaces or line breaks, never inside an entity or a surrogate pair", () => {
		// Every alignment of the unit against the 3000 boundary, through the prefix.
		for (const [unit, prefix] of ["&", "😀", "xy&", "x😀", "ab😀"].flatMap((u) => ["", "q", "qq", "qqq"].map((p) => [u, p] as const))) {
			const text = escapeSlack(prefix + unit.repeat(5000));
			const chunks = splitForSlack(text);
			expect(chunks.join("")).toBe(text);
			for (const chunk of chunks) {
				expect(chunk.length).toBeLessThanOrEqual(SLACK_TEXT_LIMIT);
				expect(chunk).not.toMatch(/&(?:a|am|amp|l|lt|g|gt)?$/);
				expect(chunk).not.toMatch(/[\ud800-\udbff]$/);
				expect(chunk).not.toMatch(/^[\udc00-\udfff]/);
			}
		}
	});

	it("prefers line breaks, then spaces, and keeps the separator with the earlier piece", () => {
		expect(splitForSlack("aaaaaa\nbb cccccc", 10)).toEqual(["aaaaaa\n", "bb cccccc"]);
		expect(splitForSlack("aaaaaa bbbbbbbb", 10)).toEqual(["aaaaaa ", "bbbbbbbb"]);
		expect(splitForSlack("short", 10)).toEqual(["short"]);
		expect(splitForSlack("", 10)).toEqual([""]);
	});

	it("never exceeds 50 blocks: a huge answer is truncated with a note", () => {
		const answer = ("x".repeat(2999) + "\n").repeat(60);
		const body = parse("slack", input(answer, { dashboardUrl: "https://d.example.test/j" }));
		expect(body.blocks).toHaveLength(SLACK_MAX_BLOCKS);
		const texts = sections(body).map((s) => s.text.text);
		expect(texts).toHaveLength(SLACK_MAX_BLOCKS - 2);
		expect(texts.slice(0, -1).join("")).toBe(answer.slice(0, 3000 * (SLACK_MAX_BLOCKS - 3)));
		expect(texts.at(-1)).toMatch(/^_…answer truncated: .*<https:\/\/d\.example\.test\/j\|in drover>\._$/);
		expect(body.blocks.at(-1).type).toBe("context");
		expect(JSON.stringify(body.blocks)).not.toContain('"text":""');
	});

	it("keeps a link whole when a long line is cut between sections at a space", () => {
		const link = "[the full run log](https://ci.example.test/runs/7)";
		const answer = `${"word ".repeat(590)}${link} ${"tail ".repeat(200)}`;
		const texts = sections(parse("slack", input(answer))).map((s) => s.text.text);
		expect(texts.length).toBeGreaterThan(1);
		expect(texts.filter((t) => t.includes("<https://ci.example.test/runs/7|the full run log>"))).toHaveLength(1);
		expect(texts.join("")).toBe(`${"word ".repeat(590)}<https://ci.example.test/runs/7|the full run log> ${"tail ".repeat(200)}`);
	});

	it("closes a code block cut between sections and opens it again in the next, its text kept", () => {
		const code = Array.from({ length: 400 }, (_, i) => `const row${i} = a **b** * c; // <x>`);
		const answer = `Here is the **script**:\n\n\`\`\`ts\n${code.join("\n")}\n\`\`\`\n\nRun it *once*.`;
		const texts = sections(parse("slack", input(answer))).map((s) => s.text.text);
		expect(texts.length).toBeGreaterThan(3);
		for (const text of texts) {
			expect(text.length).toBeLessThanOrEqual(SLACK_TEXT_LIMIT);
			expect(text.split("\n").filter((l) => l === "\`\`\`").length % 2).toBe(0);
		}
		expect(texts[0]).toMatch(/^Here is the \*script\*:\n\n\`\`\`\nconst row0 = a \*\*b\*\* \* c; \/\/ &lt;x&gt;\n/);
		expect(texts.at(-1)).toMatch(/\n\`\`\`\n\nRun it _once_\.$/);
		// With each piece's added fences taken off, the code is the answer's, line for line.
		const lines = texts.map((t, i) => t.replace(i > 0 ? /^\`\`\`\n/ : /^/, "").replace(i < texts.length - 1 ? /\n?\`\`\`$/ : /$/, "")).join("\n").split("\n");
		expect(lines.filter((l) => l.startsWith("const row"))).toEqual(code.map((l) => l.replace("<x>", "&lt;x&gt;")));
	});

	it("ends an answer cut short inside a code block with the block closed and the note after it", () => {
		const body = parse("slack", input("Output:\n```\nline 1 **x**\nline 2", { cutShort: true }));
		expect(sections(body).map((s) => s.text.text)).toEqual(["Output:\n```\nline 1 **x**\nline 2\n```\n\n(cut short at max_tokens)"]);
		expect(body.text).toBe("daily-digest: Output:\n```\nline 1 **x**\nline 2\n\n(cut short at max_tokens)");
	});

	it("still has a section for an empty answer (Slack refuses empty text)", () => {
		const body = parse("slack", input("  "));
		expect(sections(body).map((s) => s.text.text)).toEqual(["_(empty answer)_"]);
	});
});

describe("markdownToMrkdwn", () => {
	it.each([
		["**bold** and __bold__", "*bold* and *bold*"],
		["*italic* and _italic_", "_italic_ and _italic_"],
		["***both***", "*_both_*"],
		["~~struck~~", "~struck~"],
		["# Heading", "*Heading*"],
		["### A **bold** `code` heading ###", "*A bold `code` heading*"],
		["- one\n* two\n  + nested", "• one\n• two\n  • nested"],
		["[docs](https://x.example.test/a_b_(c)?q=1&r=2)", "<https://x.example.test/a_b_(c)?q=1&amp;r=2|docs>"],
		["[**docs**](https://x.example.test \"title\")", "<https://x.example.test|*docs*>"],
		["![chart](https://x.example.test/c.png)", "<https://x.example.test/c.png|chart>"],
		["<https://x.example.test/a?b=1&c=2>", "<https://x.example.test/a?b=1&amp;c=2>"],
		["https://x.example.test/__init__/*x*", "https://x.example.test/__init__/_x_"],
		["[pipe](https://x.example.test/a|b)", "<https://x.example.test/a%7Cb|pipe>"],
		["snake_case_name, 2 * 3 * 4, a*b*c", "snake_case_name, 2 * 3 * 4, a*b*c"],
		["---", "───"],
		["#hashtag", "#hashtag"],
		["**5** failed, **12** passed, ~~a~~ and ~~b~~, __c__ or __d__", "*5* failed, *12* passed, ~a~ and ~b~, *c* or *d*"],
		["**Run `npm test`** first", "*Run `npm test`* first"],
		["[`foo()`](https://x.example.test/foo)", "<https://x.example.test/foo|`foo()`>"],
		["see https://a.example.test[docs](https://b.example.test/x)", "see https://a.example.test<https://b.example.test/x|docs>"],
		["a `` ` `` b and ```` x ````", "a `` ` `` b and ```` x ````"],
	])("%j → %j", (markdown, mrkdwn) => {
		expect(markdownToMrkdwn(markdown)).toBe(mrkdwn);
	});

	it("puts a zero-width space outside a marker that a letter or wide character touches, where Slack would show the marker as text", () => {
		expect(markdownToMrkdwn("これは**重要**です")).toBe("これは\u200b*重要*\u200bです");
		expect(markdownToMrkdwn("これは*重要*です、~~古い~~案、__太字__。")).toBe("これは\u200b_重要_\u200bです、\u200b~古い~\u200b案、\u200b*太字*\u200b。");
		expect(markdownToMrkdwn("「**注意**」を読む")).toBe("「\u200b*注意*\u200b」を読む");
		expect(markdownToMrkdwn("**重要**: 次へ")).toBe("*重要*: 次へ");
		expect(markdownToMrkdwn("- **東京**と**大阪**")).toBe("• *東京*\u200bと\u200b*大阪*");
		expect(markdownToMrkdwn("**Ünïcode**d and 🚀**go**")).toBe("*Ünïcode*\u200bd and 🚀\u200b*go*");
		// Text Slack already reads right is left as it was: spaces and punctuation around the markers.
		for (const latin of ["Run **all** tests, *then* ~~not~~ __deploy__ (or **not**).", "snake_case_name, 2 * 3 * 4, a*b*c"]) {
			expect(markdownToMrkdwn(latin)).not.toContain("\u200b");
		}
		// A heading is bolded whole: its inner bold leaves no marker, so no space either.
		expect(markdownToMrkdwn("# これは**重要**です")).toBe("*これは重要です*");
	});

	it("makes a link only of http(s) and mailto, never a mention, a broadcast or a command", () => {
		expect(markdownToMrkdwn("[all](!channel) [me](@U123) [js](javascript:alert(1)) [mail](mailto:a@example.test)")).toBe(
			"all (!channel) me (@U123) js (javascript:alert(1)) <mailto:a@example.test|mail>",
		);
		expect(markdownToMrkdwn("[x](https://a.example.test)<!everyone>")).toBe("<https://a.example.test|x>&lt;!everyone&gt;");
		expect(markdownToMrkdwn("[<!channel>](https://a.example.test)")).toBe("<https://a.example.test|&lt;!channel&gt;>");
	});

	it("keeps code spans and fenced blocks as written (escaped), dropping only a fence's language tag", () => {
		expect(markdownToMrkdwn("use `**not bold** [x](https://a.example.test) <b>` and ``a ` b``")).toBe(
			"use `**not bold** [x](https://a.example.test) &lt;b&gt;` and ``a ` b``",
		);
		// A fence quoted inside a block is broken by a zero-width space: mrkdwn would end the block at it.
		expect(markdownToMrkdwn("```python\n# comment\n- **x** & *y*\n```\n~~~~\n```\n~~~~\n*after*")).toBe("```\n# comment\n- **x** &amp; *y*\n```\n```\n``\u200b`\n```\n_after_");
		expect(markdownToMrkdwn("```\nleft open *x*")).toBe("```\nleft open *x*\n```");
		expect(markdownToMrkdwn("a\r\n# b\r\n")).toBe("a\n*b*\n");
	});
});

describe("splitMrkdwn", () => {
	it("does not end a piece on a block's opening fence, and splits plain text as splitForSlack does", () => {
		const text = `${"p".repeat(60)}\n\`\`\`\n${"c".repeat(60)}\n\`\`\``;
		expect(splitMrkdwn(text, 70)).toEqual([`${"p".repeat(60)}\n`, `\`\`\`\n${"c".repeat(60)}\n\`\`\``]);
		const plain = "aaaaaa\nbb cccccc dd";
		expect(splitMrkdwn(plain, 10)).toEqual(splitForSlack(plain, 10));
	});
});

describe("formatDelivery: slack, an answer cut short at max_tokens", () => {
	it("says so in its context line too, which Slack's block cap never cuts", () => {
		const body = parse("slack", input("w ".repeat(100_000), { cutShort: true }));
		const context = (body.blocks as { type: string; elements?: { text: string }[] }[]).at(-1)!;
		expect(context.type).toBe("context");
		expect(context.elements![0]!.text).toContain("cut short at max_tokens");
		expect(JSON.stringify(parse("slack", input("Whole.")).blocks.at(-1))).not.toContain("max_tokens");
	});
});

describe("formatDelivery: discord", () => {
	it("has the answer as content, one embed, and no mentions", () => {
		expect(parse("discord", input("All green. @everyone look"))).toEqual({
			content: "All green. @everyone look",
			embeds: [{ title: "daily-digest", description: "schedule: morning (schedule)", timestamp: "2026-11-30T09:01:12.000Z", footer: { text: "job-2026-11-30-k2x9qa" } }],
			allowed_mentions: { parse: [] },
		});
	});

	it("describes a manual run by its trigger and links the dashboard", () => {
		const body = parse("discord", { agent: "ops", job: { ...job, schedule: null, trigger_type: "webhook", finished_at: null }, answer: "x", dashboardUrl: "https://d.example.test/j" });
		expect(body.embeds).toEqual([{ title: "ops", description: "trigger: webhook", url: "https://d.example.test/j", footer: { text: "job-2026-11-30-k2x9qa" } }]);
	});

	it("truncates content to 2000 characters with …, and the title to 256", () => {
		const answer = "y".repeat(5000);
		const body = parse("discord", input(answer, { agent: "a".repeat(300) }));
		expect(body.content).toHaveLength(DISCORD_CONTENT_LIMIT);
		expect(body.content).toBe(`${"y".repeat(1999)}…`);
		expect(body.embeds[0].title).toBe(`${"a".repeat(255)}…`);
		// The embed says the answer was cut and where the rest is; an answer that fits gets no such note.
		expect(body.embeds[0].description).toContain(`The answer is cut to 2000 characters; the full answer is in job ${body.embeds[0].footer.text}'s output`);
		expect(parse("discord", input("y".repeat(2000))).content).toBe("y".repeat(2000));
		expect(parse("discord", input("y".repeat(2000))).embeds[0].description).not.toContain("cut");
		expect(body.allowed_mentions).toEqual({ parse: [] });
	});

	it("says an answer cut short at max_tokens was cut in its embed, where a long answer's content loses the note", () => {
		const long = parse("discord", input("z".repeat(30_000), { cutShort: true }));
		expect(long.content).not.toContain("max_tokens");
		expect(long.embeds[0].description).toContain("The model's answer was cut short at max_tokens.");
		const short = parse("discord", input("Partial", { cutShort: true }));
		expect(short.content).toBe("Partial\n\n(cut short at max_tokens)");
		expect(short.embeds[0].description).toContain("cut short at max_tokens");
		expect(parse("discord", input("Whole.")).embeds[0].description).not.toContain("max_tokens");
	});

	it("does not split an emoji when truncating", () => {
		const answer = "😀".repeat(1500); // 3000 UTF-16 units
		const content: string = parse("discord", input(answer)).content;
		expect(content.length).toBeLessThanOrEqual(DISCORD_CONTENT_LIMIT);
		expect(content).toBe(`${"😀".repeat(999)}…`);
		expect(clip("ab😀", 3)).toBe("ab…");
	});
});

describe("a cut of a delivery's text", () => {
	const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });
	/** Whether pieces of `text` end only where one visible character ends and the next begins. */
	const cutBetweenCharacters = (text: string, pieces: string[]) => {
		const boundaries = new Set([...graphemes.segment(text)].map((s) => s.index));
		let at = 0;
		return pieces.slice(0, -1).every((piece) => boundaries.has((at += piece.length)));
	};

	it("splits no visible character between Slack sections: not a family emoji, nor a letter from its accent", () => {
		for (const text of [`${"x".repeat(2995)}👨‍👩‍👧‍👦 and on`, `x${"e\u0301".repeat(1600)}`, `${"q".repeat(2998)}🇯🇵🇯🇵`]) {
			const chunks = splitForSlack(text);
			expect(chunks.join("")).toBe(text);
			expect(chunks.length).toBe(2);
			expect(cutBetweenCharacters(text, chunks), JSON.stringify(chunks.map((c) => c.slice(-3)))).toBe(true);
			expect(chunks[1]).not.toMatch(/^[\u0300-\u036f\u200d]/);
		}
		const sections = parse("slack", input(`${"x".repeat(2995)}👨‍👩‍👧‍👦`)).blocks.filter((b: { type: string }) => b.type === "section");
		expect(sections.map((b: { text: { text: string } }) => b.text.text)).toEqual(["x".repeat(2995), "👨‍👩‍👧‍👦"]);
	});

	it("finds the last boundary before any cut from a boundary, however far back a run of flags begins", () => {
		const texts = ["x" + "🇯🇵".repeat(100), "🇯🇵".repeat(100) + "🇯", "ab" + "👨‍👩‍👧‍👦".repeat(30), "x" + "e\u0301".repeat(200), "क्षत्रिय ".repeat(30), "1️⃣#️⃣".repeat(30)];
		for (const text of texts) {
			const boundaries = [...[...graphemes.segment(text)].map((s) => s.index), text.length];
			for (const from of boundaries.slice(0, 5)) {
				for (let end = from + 1; end <= text.length; end++) {
					const expected = boundaries.findLast((b) => b <= end)!;
					// A first character longer than the cut is cut between code points: there is no boundary to keep.
					if (expected > from) expect(graphemeEnd(text, end, from), `${JSON.stringify(text.slice(0, 8))} from ${from} to ${end}`).toBe(expected);
				}
			}
		}
	});

	it("cuts a character longer than its look-back between code points, never inside a surrogate pair", () => {
		// One character a reader sees (a ZWJ sequence of 41 emoji), 122 units: no boundary to keep in it.
		const chain = "👨" + "\u200d👩".repeat(40);
		for (let end = 3; end <= 64; end++) {
			const cut = graphemeEnd(chain, end);
			expect(cut === end || cut === end - 1, `at ${end}`).toBe(true);
			// A boolean: a lone surrogate in a failure's message would break the runner's report.
			expect(/[\ud800-\udbff]$/.test(chain.slice(0, cut)), `a lone half at ${end}`).toBe(false);
		}
	});

	it("ends Discord's content, Slack's header and its fallback text between characters", () => {
		expect(parse("discord", input(`${"y".repeat(1996)}🇯🇵🇯🇵`)).content).toBe(`${"y".repeat(1996)}…`);
		expect(parse("discord", input(`${"y".repeat(1996)}e\u0301\u0301\u0301 more`)).content).toBe(`${"y".repeat(1996)}…`);
		expect(clip("ab👨‍👩‍👧‍👦cd", 8)).toBe("ab…");
		expect(parse("slack", input(`${"z".repeat(297)}🇯🇵 and on`)).text).toBe(`daily-digest: ${"z".repeat(297)}…`);
		const header = parse("slack", input("x", { agent: `${"a".repeat(140)}👨‍👩‍👧‍👦` })).blocks[0].text.text;
		expect(header).toBe(`${"a".repeat(140)}…`);
	});
});

describe("unicode", () => {
	const answer = "Résumé ✅ — 日本語のテキスト 🚀 «ok» \u200d👩‍💻";
	it.each(["webhook", "slack", "discord"] as const)("is preserved by %s", (target) => {
		const out = formatDelivery(target, input(answer, { agent: "digest-ü" }));
		expect(out.body).toContain(answer);
		expect(out.body).toContain("digest-ü");
		expect(out.body).not.toMatch(/\\u[0-9a-f]{4}/i); // sent as UTF-8, not \u escapes
	});
});

describe("formatHook", () => {
	it.each(["completed", "failed", "cancelled", "indeterminate"] as const)("wraps the record as drover.job.%s", (event) => {
		const out = formatHook(event, { ...job, status: event });
		expect(out.contentType).toBe("application/json");
		expect(JSON.parse(out.body)).toEqual({ type: `drover.job.${event}`, job: { ...job, status: event } });
	});
});
