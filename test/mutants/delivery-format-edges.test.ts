// A code block cut between two Slack sections (src/delivery/format.ts, splitMrkdwn), where a mutation
// walk found the suite blind: the fence that closes the first section's half fits within its 3,000
// characters even when the cut falls inside a line (a long line of code with no space to cut at), and
// it follows the last line of code directly, not after a blank line Slack would show in the block.
import { describe, expect, it } from "vitest";
import { formatDelivery, SLACK_TEXT_LIMIT, type DeliveryInput } from "../../src/delivery/format.ts";

const job = { id: "job-2026-12-07-c0debk", agent: "build-notes", schedule: null, trigger_type: "manual", status: "completed", finished_at: "2026-12-07T09:01:12.000Z", summary: null };
const input = (answer: string): DeliveryInput => ({ agent: "build-notes", job, answer });
const sectionTexts = (answer: string) =>
	(JSON.parse(formatDelivery("slack", input(answer)).body) as { blocks: { type: string; text?: { text: string } }[] }).blocks.flatMap((b) => (b.type === "section" ? [b.text!.text] : []));

describe("a code block cut between Slack sections", () => {
	it("cut inside a line with nothing to break at: the first section, its closing fence included, is at most 3,000 characters", () => {
		const line = "x".repeat(5_000);
		const texts = sectionTexts(`\`\`\`\n${line}\n\`\`\``);
		expect(texts).toHaveLength(2);
		for (const text of texts) expect(text.length).toBeLessThanOrEqual(SLACK_TEXT_LIMIT);
		expect(texts[0]).toMatch(/x\n```$/);
		expect(texts[1]).toMatch(/^```\nx/);
		// Nothing of the line is lost or doubled by the cut.
		expect(texts.map((t) => t.replace(/^```\n|\n?```$/g, "")).join("")).toBe(line);
	});

	it("cut at a line break: the closing fence follows the last line of code, with no blank line before it", () => {
		const code = Array.from({ length: 400 }, (_, i) => `const row${i} = a * b;`);
		const texts = sectionTexts(`\`\`\`\n${code.join("\n")}\n\`\`\``);
		expect(texts.length).toBeGreaterThan(1);
		for (const text of texts) {
			expect(text).toMatch(/;\n```$/);
			expect(text).not.toContain("\n\n");
		}
	});
});
