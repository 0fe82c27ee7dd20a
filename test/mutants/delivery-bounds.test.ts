// A delivery's Slack limits taken at their ends (3,000 characters a section, the fallback's first
// 300), a link or a code block straddling a section's cut: a mutation walk found each unchecked.
import { describe, expect, it } from "vitest";
import { formatDelivery, SLACK_TEXT_LIMIT, splitForSlack, type DeliveryInput } from "../../src/delivery/format.ts";

const job = { id: "job-2026-11-30-k2x9qa", agent: "daily-digest", schedule: "morning", trigger_type: "schedule", status: "completed", finished_at: "2026-11-30T09:01:12.000Z", summary: null };
const input = (answer: string): DeliveryInput => ({ agent: "daily-digest", job, answer });
const slack = (answer: string) => JSON.parse(formatDelivery("slack", input(answer)).body) as { text: string; blocks: { type: string; text?: { text: string } }[] };
const sectionTexts = (answer: string) => slack(answer).blocks.flatMap((b) => (b.type === "section" ? [b.text!.text] : []));

describe("a Slack delivery at its limits", () => {
	it("keeps an answer of exactly 3,000 characters in one section, and splits one of 3,001", () => {
		expect(splitForSlack("ab ".repeat(1000))).toEqual(["ab ".repeat(1000)]);
		expect(sectionTexts("ab ".repeat(1000))).toEqual(["ab ".repeat(1000)]);
		expect(splitForSlack(`${"ab ".repeat(1000)}c`)).toHaveLength(2);
	});

	it("gives the fallback text an answer of exactly 300 characters whole, without an ellipsis", () => {
		const answer = "x".repeat(300);
		expect(slack(answer).text).toBe(`daily-digest: ${answer}`);
		expect(slack(`${answer}y`).text).toBe(`daily-digest: ${answer}…`);
	});

	it("moves a link whose label's spaces fall at a section's end whole into the next section", () => {
		const label = "see the whole run log see the whole run log";
		const answer = `${"word ".repeat(590)}[${label}](https://ci.example.test/runs/7) ${"tail ".repeat(200)}`;
		const texts = sectionTexts(answer);
		expect(texts.length).toBeGreaterThan(1);
		expect(texts.filter((t) => t.includes(`<https://ci.example.test/runs/7|${label}>`))).toHaveLength(1);
		for (const text of texts) expect((text.match(/</g) ?? []).length, text.slice(-80)).toBe((text.match(/>/g) ?? []).length);
		expect(texts.join("")).toBe(`${"word ".repeat(590)}<https://ci.example.test/runs/7|${label}> ${"tail ".repeat(200)}`);
	});

	it("keeps each section of a code block cut between sections within 3,000 characters, its closing fence included", () => {
		const code = Array.from({ length: 400 }, (_, i) => `const row${i} = a * b; // ${"x".repeat(i % 7)}`);
		const texts = sectionTexts(`Here:\n\n\`\`\`ts\n${code.join("\n")}\n\`\`\``);
		expect(texts.length).toBeGreaterThan(2);
		for (const text of texts) expect(text.length).toBeLessThanOrEqual(SLACK_TEXT_LIMIT);
	});
});

describe("Markdown's headings as mrkdwn", () => {
	it("bolds a heading of six #, and leaves seven as the text CommonMark reads them as", async () => {
		const { markdownToMrkdwn } = await import("../../src/delivery/mrkdwn.ts");
		expect(markdownToMrkdwn("###### Six")).toBe("*Six*");
		expect(markdownToMrkdwn("####### Seven")).toBe("####### Seven");
	});
});

describe("a webhook delivery's body at WEBHOOK_BODY_LIMIT", async () => {
	const { WEBHOOK_BODY_LIMIT } = await import("../../src/delivery/webhook-body.ts");
	const webhook = (answer: string) => formatDelivery("webhook", input(answer)).body;
	const bytes = (body: string) => new TextEncoder().encode(body).length;
	const room = WEBHOOK_BODY_LIMIT - bytes(webhook(""));

	it("sends an answer whose body is exactly the limit whole, and cuts one a byte over", () => {
		const exact = webhook("a".repeat(room));
		expect(bytes(exact)).toBe(WEBHOOK_BODY_LIMIT);
		expect(JSON.parse(exact)).toMatchObject({ truncated: false, answer: "a".repeat(room) });
		expect(JSON.parse(webhook("a".repeat(room + 1)))).toMatchObject({ truncated: true, full_answer_chars: room + 1 });
	});

	it("counts a backslash as the two bytes JSON writes it in, so a body of them stays within the limit", () => {
		const body = webhook("\\".repeat(60_000));
		expect(bytes(body)).toBeLessThanOrEqual(WEBHOOK_BODY_LIMIT);
		expect(JSON.parse(body)).toMatchObject({ truncated: true, full_answer_chars: 60_000 });
	});

	it("counts a form feed and a backspace as the two bytes JSON writes them in, so a body of them that fits is sent whole", () => {
		for (const c of ["\f", "\b"]) {
			const answer = c.repeat(50_000);
			const body = webhook(answer);
			expect(bytes(body)).toBeLessThanOrEqual(WEBHOOK_BODY_LIMIT);
			expect(JSON.parse(body)).toMatchObject({ truncated: false, answer });
		}
	});
});
