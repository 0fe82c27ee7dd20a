import { describe, expect, it } from "vitest";
import {
	AGENT_KEYWORDS,
	AUTH_KEYWORDS,
	CLASSIFICATION_ORDER,
	CONFIG_KEYWORDS,
	DELIVERY_KEYWORDS,
	RATE_LIMIT_KEYWORDS,
	SCRIPT_KEYWORDS,
	TIMEOUT_KEYWORDS,
	classifyFailure,
	incidentId,
	incidentSignature,
	normalizeError,
	type FailureClass,
} from "../../src/incidents/signature.ts";
import { sha256Hex } from "../../src/shared/hash.ts";
import { alertBody, incidentsUrl } from "../../src/incidents/alert-body.ts";
import type { Incident } from "../../src/store/incidents.ts";

describe("normalizeError", () => {
	it("collapses whitespace runs, trims and lowercases", () => {
		expect(normalizeError("  Upstream   ERROR:\n\tConnection\r\nReset  ")).toBe("upstream error: connection reset");
		expect(normalizeError("")).toBe("");
		expect(normalizeError(" \n\t ")).toBe("");
	});
});

describe("incidentSignature and incidentId", () => {
	it("is the first 12 hex of sha256(agent + normalized error[:200])", async () => {
		const sig = await incidentSignature("digest", "  Model Output Was EMPTY ");
		expect(sig).toMatch(/^[0-9a-f]{12}$/);
		expect(sig).toBe((await sha256Hex("digest" + "model output was empty")).slice(0, 12));
	});

	it("is stable across whitespace and case differences", async () => {
		const a = await incidentSignature("digest", "Slack webhook returned 404: no_service");
		const b = await incidentSignature("digest", "  slack   WEBHOOK returned\n404:\tno_service\n");
		expect(b).toBe(a);
	});

	it("is identical for errors that differ only after the first 200 normalized characters", async () => {
		const head = "x".repeat(195) + " boom";
		expect(normalizeError(head)).toHaveLength(200);
		const a = await incidentSignature("digest", `${head} request_id=req_111 at 2026-11-30T09:00:00Z`);
		const b = await incidentSignature("digest", `${head}   request_id=req_222 at 2026-12-01T09:00:00Z`);
		expect(b).toBe(a);
		// …and different when the difference falls inside the first 200.
		const c = await incidentSignature("digest", "y" + head.slice(1));
		expect(c).not.toBe(a);
	});

	it("counts the 200 characters in code points, as Hermes' Python slice does: an emoji is one, never cut in half", async () => {
		// hashlib.sha256(("digest" + normalize(e)[:200]).encode()).hexdigest()[:12], computed in Python.
		expect(await incidentSignature("digest", `tool failed: ${"🔥".repeat(150)} disk A`)).toBe("349b9346f83e");
		// Errors differing at their 101st character, where UTF-16 units would have ended the window mid-emoji.
		const a = `x${"😀".repeat(120)}tail-1`;
		const b = `x${"😀".repeat(99)}😁${"😀".repeat(20)}`;
		expect(await incidentSignature("digest", a)).not.toBe(await incidentSignature("digest", b));
	});

	it("counts the 200 characters after normalization, so leading whitespace does not shift the window", async () => {
		const body = "e".repeat(200);
		expect(await incidentSignature("a", `\n\n   ${body}tail-1`)).toBe(await incidentSignature("a", `${body}tail-2`));
	});

	it("gives different agents different signatures and ids for the same error", async () => {
		const error = "HTTP 500 from upstream";
		const s1 = await incidentSignature("digest", error);
		const s2 = await incidentSignature("triage", error);
		expect(s1).not.toBe(s2);
		expect(incidentId("digest", s1)).not.toBe(incidentId("triage", s2));
		// Agents sharing their first six characters still differ, through the signature.
		const s3 = await incidentSignature("digest-weekly", error);
		expect(incidentId("digest-weekly", s3)).not.toBe(incidentId("digest", s1));
	});

	it("formats the id as <agent[:6]>_<signature>", async () => {
		const sig = await incidentSignature("daily-digest", "boom");
		expect(incidentId("daily-digest", sig)).toBe(`daily-_${sig}`);
		expect(incidentId("ops", sig)).toBe(`ops_${sig}`);
		expect(incidentId("daily-digest", sig)).toMatch(/^[^_]{1,6}_[0-9a-f]{12}$/);
	});
});

describe("classifyFailure", () => {
	const CASES: [string, FailureClass][] = [
		// rate_limit
		["429 Too Many Requests", "rate_limit"],
		['{"type":"error","error":{"type":"rate_limit_error","message":"Number of requests has exceeded your rate limit"}}', "rate_limit"],
		["Monthly QUOTA exceeded for this organization", "rate_limit"],
		["upstream said no (status=429)", "rate_limit"],
		// overloaded is the provider's capacity, not a rate limit
		['529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}', "unknown"],
		// timeout
		["Request timed out after 600s", "timeout"],
		["job timeout: exceeded 900 seconds", "timeout"],
		["deadline exceeded", "timeout"],
		["HTTP 504 Gateway Timeout", "timeout"],
		["upstream closed the connection: HTTP 408", "timeout"],
		// auth
		["401 Unauthorized", "auth"],
		['{"type":"authentication_error","message":"invalid x-api-key"}', "auth"],
		["permission_error: your key lacks access to this model", "auth"],
		["Forbidden", "auth"],
		["request failed (403)", "auth"],
		// delivery
		["Slack returned 404 no_service", "delivery"],
		["discord answered 400 invalid form body", "delivery"],
		["delivery gave up after 6 attempts", "delivery"],
		// config
		["ANTHROPIC_API_KEY is not set", "config"],
		["missing secret TRIAGE_WEBHOOK_SECRET", "delivery"], // "webhook" (delivery) precedes "missing secret" (config)
		["invalid cron expression 0 0 16 * * 5", "config"],
		["agent definition changed since the job was created", "config"],
		["model claude-2 is retired", "config"],
		["not allowed base url https://evil.example.test: the key guard refused it", "config"],
		// A tick whose shards cannot load the fleet: the file is at fault, whatever key its message names.
		['tick failed: shard 0: fleet.yaml is invalid:\n  agents[0].max_turn: unknown key (did you mean "max_turns"?)', "config"],
		['tick partial: shard 3: fleet.yaml is invalid:\n  agents[1].schedules[0].cron: "0 0 9 * * 1" has 6 fields', "config"],
		// script: Hermes' class before agent; its words only as whole tokens
		["pre-run script exited with status 1", "script"],
		["the run stopped while tool run_script was executing; its effect is unknown (indeterminate)", "script"],
		["backup.sh: exit code 2", "script"],
		["tool description too long", "agent"],
		["transcription failed", "unknown"],
		// agent
		["reached max_turns (10)", "agent"],
		["usage_limit: max_cost_usd 0.50 reached", "agent"],
		["a tool was executing when the run stopped: indeterminate", "agent"],
		["invalid_request_error: messages: text content blocks must be non-empty", "agent"],
		["The model refused to answer", "agent"],
		// Each keyword no other case needed alone (a mutation walk dropped them from their lists unseen).
		["rate_limit_error", "rate_limit"],
		["rate-limit exceeded", "rate_limit"],
		["Too Many Requests", "rate_limit"],
		["upstream answered HTTP 408", "timeout"],
		["upstream answered HTTP 504", "timeout"],
		["upstream answered HTTP 403", "auth"],
		["Unauthorized", "auth"],
		["authentication_error", "auth"],
		["Invalid API key", "auth"],
		["invalid x-api-key", "auth"],
		["could not deliver the answer", "delivery"],
		["bad config value", "config"],
		["missing secret PAGER_URL", "config"],
		["not allowed base url https://evil.example.test", "config"],
		["the scripts failed", "script"],
		["backup job: exit status 3", "script"],
		["usage limit reached", "agent"],
		["the run stopped: indeterminate", "agent"],
		["model output was not valid json", "agent"],
		["stopped at max_tokens", "agent"],
		// unknown
		["something odd happened", "unknown"],
		["", "unknown"],
		["HTTP 500 Internal Server Error", "unknown"],
		// numeric codes are whole tokens only
		["job-2026-11-30-abc403 crashed", "unknown"],
		["used 14290 tokens then crashed", "unknown"],
		["used 4290 tokens then crashed", "unknown"],
		["status=401", "auth"],
		["(429)", "rate_limit"],
		// order conflicts: the first class in CLASSIFICATION_ORDER wins
		["webhook timed out", "timeout"],
		["429 from slack webhook", "rate_limit"],
		["Slack webhook: 401 invalid_token", "auth"],
		["rate limit reached while waiting; request timed out", "rate_limit"],
		["timeout while reading config", "timeout"],
		["delivery failed: DIGEST_SLACK_WEBHOOK_URL is not set", "delivery"],
		["tool http_fetch refused: url guard", "config"],
		["the request timed out (401)", "timeout"],
		["Slack webhook returned 403", "auth"],
		// The loop's fixed failures of a model's answer are the agent's.
		["the model refused to answer (stop_reason refusal)", "agent"],
		["the conversation outgrew the model's context window (stop_reason model_context_window_exceeded)", "agent"],
		["response truncated at max_tokens inside a call to tool http_fetch", "agent"],
		["the model's answer was too large to store, so the conversation cannot go on", "agent"],
	];

	it("has at least 20 cases", () => {
		expect(CASES.length).toBeGreaterThanOrEqual(20);
	});

	it.each(CASES)("%j → %s", (text, expected) => {
		expect(classifyFailure(text)).toBe(expected);
	});

	it("is insensitive to case and whitespace", () => {
		expect(classifyFailure("RATE\n\n   LIMIT")).toBe("rate_limit");
		expect(classifyFailure("Timed\tOut")).toBe("timeout");
	});

	it("documents its order and keyword lists", () => {
		expect(CLASSIFICATION_ORDER.map((e) => e.class)).toEqual(["rate_limit", "timeout", "auth", "delivery", "config", "script", "agent"]);
		expect(CLASSIFICATION_ORDER.map((e) => e.keywords)).toEqual([RATE_LIMIT_KEYWORDS, TIMEOUT_KEYWORDS, AUTH_KEYWORDS, DELIVERY_KEYWORDS, CONFIG_KEYWORDS, SCRIPT_KEYWORDS, AGENT_KEYWORDS]);
		expect(RATE_LIMIT_KEYWORDS).not.toContain("overloaded");
		for (const list of CLASSIFICATION_ORDER) for (const keyword of list.keywords) expect(keyword, "keywords are matched against lowercased text").toBe(keyword.toLowerCase());
	});

	it("classifies every keyword of a class as that class or an earlier one", () => {
		CLASSIFICATION_ORDER.forEach((entry, index) => {
			for (const keyword of entry.keywords) {
				const got = classifyFailure(`error: ${keyword}!`);
				const at = CLASSIFICATION_ORDER.findIndex((e) => e.class === got);
				expect(at, `${keyword} → ${got}`).toBeGreaterThanOrEqual(0);
				expect(at, `${keyword} → ${got}`).toBeLessThanOrEqual(index);
			}
		});
	});
});

const incident: Incident = {
	id: "digest_0123456789ab",
	agent: "digest",
	signature: "0123456789ab",
	class: "delivery",
	state: "detected",
	error: "delivery to slack failed: <!channel> @everyone & more",
	count: 3,
	first_seen_at: "2026-12-03T08:00:00.000Z",
	last_seen_at: "2026-12-03T09:00:00.000Z",
	last_job_id: "job-2026-12-03-abcdef",
	alerted_at: null,
	resolved_at: null,
	closed_at: null,
	closed_by: null,
	failing: ["delivery", "schedule:nightly"],
};

describe("alertBody", () => {
	const line = "drover incident digest_0123456789ab on digest, delivery ×3 (failing: delivery, schedule:nightly): delivery to slack failed: <!channel> @everyone & more";

	it("is the incident whole for a generic webhook, with its one line as text", () => {
		expect(JSON.parse(alertBody("https://alerts.example.test/hook", incident))).toEqual({ type: "drover.incident", text: line, incident });
	});

	it("is a text Slack's incoming webhook takes, escaped so the error pings no one", () => {
		expect(JSON.parse(alertBody("https://hooks.slack.com/services/T0/B0/x", incident))).toEqual({
			text: line.replace("<!channel>", "&lt;!channel&gt;").replace("& more", "&amp; more"),
		});
	});

	it("is Discord's content, with mentions off and within its 2000 characters", () => {
		const long = { ...incident, failing: Array.from({ length: 200 }, (_, i) => `schedule:every-${i}-minutes`) };
		const body = JSON.parse(alertBody("https://discord.com/api/webhooks/1/x", long)) as { content: string; allowed_mentions: unknown };
		expect(body.allowed_mentions).toEqual({ parse: [] });
		expect(body.content.length).toBeLessThanOrEqual(2000);
		expect(body.content.startsWith("drover incident digest_0123456789ab on digest, delivery ×3 (failing: schedule:every-0-minutes, schedule:every-1-minutes")).toBe(true);
	});
});

// A mutation walk of src/incidents/alert-body.ts found the alert's line and the choice of body passing
// the suite changed: the error kept whole rather than clipped at 500 characters, "×1" said of a first
// failure, an empty "(failing: )", and Discord's or Slack's body sent to a URL that is not their webhook
// (or the generic body to Discord's other hosts).
const opened: Incident = { ...incident, error: "model call failed: 500", failing: ["delivery"] };

describe("alertBody's line", () => {
	const first: Incident = { ...opened, count: 1, failing: [] };
	const textOf = (url: string, i: Incident) => (JSON.parse(alertBody(url, i)) as { text: string }).text;

	it("says no count for a first failure, and no failing list when none is left or known", () => {
		const line = "drover incident digest_0123456789ab on digest, delivery: model call failed: 500";
		expect(textOf("https://alerts.example.test/hook", first)).toBe(line);
		expect(textOf("https://alerts.example.test/hook", { ...first, failing: null })).toBe(line);
		expect(textOf("https://alerts.example.test/hook", { ...first, count: 2 })).toBe("drover incident digest_0123456789ab on digest, delivery ×2: model call failed: 500");
	});

	it("carries the error's first 500 characters, cut with an ellipsis (the API has it whole)", () => {
		const head = "drover incident digest_0123456789ab on digest, delivery: ";
		expect(textOf("https://alerts.example.test/hook", { ...first, error: "e".repeat(500) })).toBe(head + "e".repeat(500));
		expect(textOf("https://alerts.example.test/hook", { ...first, error: "e".repeat(501) })).toBe(head + "e".repeat(499) + "…");
	});
});

describe("alertBody's dashboard link", () => {
	const link = "https://drover.example.test/incidents?agent=digest";

	it("is the agent's incidents under the public origin, the name as a query value; none without an origin", () => {
		expect(incidentsUrl("https://drover.example.test", opened)).toBe(link);
		expect(incidentsUrl("https://drover.example.test", { agent: "scheduler" })).toBe("https://drover.example.test/incidents?agent=scheduler");
		expect(incidentsUrl(null, opened)).toBeNull();
	});

	it("goes as dashboard_url beside the generic body's line, which stays as it was", () => {
		const body = JSON.parse(alertBody("https://alerts.example.test/hook", opened, link)) as Record<string, unknown>;
		expect(body).toEqual({ type: "drover.incident", text: "drover incident digest_0123456789ab on digest, delivery ×3 (failing: delivery): model call failed: 500", incident: opened, dashboard_url: link });
	});

	it("follows Slack's line as a link it shows as Open in drover", () => {
		expect(JSON.parse(alertBody("https://hooks.slack.com/services/T0/B0/x", opened, `${link}&x=<b>`))).toEqual({
			text: "drover incident digest_0123456789ab on digest, delivery ×3 (failing: delivery): model call failed: 500 · <https://drover.example.test/incidents?agent=digest&amp;x=&lt;b&gt;|Open in drover>",
		});
	});

	it("follows Discord's line whole, in angle brackets (no embed), the line cut to keep the content within 2000", () => {
		const short = JSON.parse(alertBody("https://discord.com/api/webhooks/1/x", opened, link)) as { content: string };
		expect(short.content).toBe(`drover incident digest_0123456789ab on digest, delivery ×3 (failing: delivery): model call failed: 500 <${link}>`);
		const long = { ...opened, failing: Array.from({ length: 200 }, (_, i) => `schedule:every-${i}-minutes`) };
		const cut = JSON.parse(alertBody("https://discord.com/api/webhooks/1/x", long, link)) as { content: string };
		expect(cut.content.length).toBe(2000);
		expect(cut.content.endsWith(`… <${link}>`)).toBe(true);
	});
});

describe("alertBody's shape", () => {
	const kind = (url: string) => Object.keys(JSON.parse(alertBody(url, opened)) as object).sort().join(",");

	it("is Discord's on each of Discord's hosts, at its webhooks' path only", () => {
		for (const host of ["discord.com", "discordapp.com", "ptb.discord.com", "canary.discord.com"]) {
			expect(kind(`https://${host}/api/webhooks/1/x`), host).toBe("allowed_mentions,content");
		}
		expect(kind("https://discord.com/relay/1/x")).toBe("incident,text,type");
		expect(kind("https://evil-discord.com/api/webhooks/1/x")).toBe("incident,text,type");
	});

	it("is Slack's at hooks.slack.com only: another Slack host gets the incident whole", () => {
		expect(kind("https://hooks.slack.com/services/T0/B0/x")).toBe("text");
		expect(kind("https://api.slack.com/hooks/x")).toBe("incident,text,type");
	});
});
