/**
 * Webhook tools: the model's input is POSTed, signed, to a URL the operator keeps in a Worker
 * secret. The URL can carry a credential (Slack-style hook paths do), so it never appears in a
 * tool result or a log line.
 *
 * Signature: `x-drover-signature: sha256=<hex HMAC-SHA256(key, "<timestamp>.<body>")>` with
 * `x-drover-timestamp` in unix seconds, the same scheme drover checks on its own inbound webhooks.
 * The key is the secret `<url_secret>_SIGNING_KEY` when it is set, otherwise the URL secret's value
 * itself: a receiver that knows its own URL can verify without a second secret, and one that wants
 * a key independent of the URL gets it by setting the second secret.
 */
import { signatureHeaders } from "../../api/webhook-signature.ts";
import type { Tool } from "../../config/schema.ts";
import { postTarget, resolveSecretUrl, scrubbedExcerpt, scrubSecretUrl, secretNamed } from "../../delivery/secret-url.ts";
import { log } from "../../log.ts";
import { dropSecretTail } from "../../security/cut.ts";
import { abortable } from "../../shared/abortable.ts";
import { outboundFetch } from "../../shared/subrequests.ts";
import type { ToolContext, ToolOutcome } from "../contracts.ts";
import { decodeLenient, failureKind, failureReason, readCapped, toolDeadline } from "./http-common.ts";
import { InvalidToolSchemaError, toolInputProblems } from "./input-check.ts";

export type WebhookTool = Extract<Tool, { type: "webhook" }>;

/** How much of a webhook's answer is read and handed to the model. */
export const WEBHOOK_MAX_RESPONSE_BYTES = 1_000_000;
const ERROR_EXCERPT_CHARS = 500;

export async function callWebhookTool(tool: WebhookTool, input: unknown, ctx: ToolContext, toolUseId: string): Promise<ToolOutcome> {
	const target = resolveSecretUrl(secretNamed(ctx.env, tool.url_secret));
	if (target.kind === "missing") {
		log.warn("tool.webhook.not_configured", { agent: ctx.agent.name, job_id: ctx.jobId, tool: tool.name, url_secret: tool.url_secret });
		return { ok: false, content: `webhook tool ${tool.name} is not configured (the operator has not set its URL secret)`, failure: "not_configured" };
	}
	if (target.kind === "not-http") {
		log.warn("tool.webhook.bad_url", { agent: ctx.agent.name, job_id: ctx.jobId, tool: tool.name, url_secret: tool.url_secret });
		return { ok: false, content: `webhook tool ${tool.name} is not configured correctly (its URL secret is not an http(s) URL)`, failure: "bad_url" };
	}
	const { url } = target;
	// The API does not hold the model's input to the tool's input_schema: a call that breaks it is not
	// sent (its receiver expects that shape, and may act on what it can parse), and the model is told
	// what is wrong so it can call again with input that fits.
	const problem = inputProblem(tool, input, ctx);
	if (problem) return { ok: false, ...problem };
	const key = secretNamed(ctx.env, `${tool.url_secret}_SIGNING_KEY`) ?? url;

	const body = JSON.stringify({ tool: tool.name, input: input ?? {}, job_id: ctx.jobId });
	const headers = {
		"content-type": "application/json",
		"user-agent": "drover",
		...(await signatureHeaders(key, body)),
		// The same tool call retried (after a crash or a network error) carries the same key, so the
		// receiver can answer it once.
		"idempotency-key": `${ctx.jobId}:${toolUseId}`,
	};

	const limit = toolDeadline(ctx.signal);
	const { signal } = limit;
	let status: number;
	let text: string;
	let truncated: boolean;
	try {
		// Redirects are not followed: the signed payload goes to the configured URL or nowhere.
		const to = postTarget(url);
		const response = await abortable(outboundFetch(ctx.env)(to.url, { method: "POST", headers: { ...to.headers, ...headers }, body, redirect: "manual", signal }), signal);
		status = response.status;
		const read = await readCapped(response.body, WEBHOOK_MAX_RESPONSE_BYTES, signal);
		text = decodeLenient(read);
		truncated = read.truncated;
	} catch (error) {
		// A network error's message may quote the URL; it is cut out before anyone sees it.
		const reason = scrubSecretUrl(failureReason(error, signal, true), url, "<webhook url>");
		log.warn("tool.webhook.failed", { agent: ctx.agent.name, job_id: ctx.jobId, tool: tool.name, error_message: reason });
		return { ok: false, content: `webhook ${tool.name} failed: ${reason}`, failure: failureKind(signal) };
	} finally {
		limit.clear();
	}
	log.info("tool.webhook", { agent: ctx.agent.name, job_id: ctx.jobId, tool: tool.name, status, truncated });

	// The answer goes to the model and the job's output, which a read token can fetch: a server that
	// echoes its own URL (an error page, "Cannot POST /…") must not hand the credential in it over.
	if (status < 200 || status > 299) {
		return { ok: false, content: `webhook answered ${status}: ${scrubbedExcerpt(text, url, "<webhook url>", ERROR_EXCERPT_CHARS, truncated)}`, failure: `http_${status}` };
	}
	if (text === "") return { ok: true, content: `webhook answered ${status} with an empty body` };
	const answer = scrubbedExcerpt(text, url, "<webhook url>", Number.POSITIVE_INFINITY, truncated);
	// scrubbedExcerpt drops a cut end of this tool's own URL; one of another secret (an API key the
	// receiver echoes, another URL secret) goes here, as http_fetch's does.
	return { ok: true, content: truncated ? `${dropSecretTail(answer)}\n[truncated at ${WEBHOOK_MAX_RESPONSE_BYTES} bytes]` : answer };
}

/** Why `input` is not sent to `tool`'s receiver (and the kind, for tool.call), or null when it fits the tool's input_schema. */
function inputProblem(tool: WebhookTool, input: unknown, ctx: ToolContext): { content: string; failure: string } | null {
	try {
		const problems = toolInputProblems(ctx.agent, tool.name, (input ?? {}) as Record<string, unknown>);
		if (problems.length === 0) return null;
		const said = problems.map((p) => `${p.path}: ${p.message}`).join("; ");
		return { content: `input does not match ${tool.name}'s input_schema, so it was not sent: ${said}. Call ${tool.name} again with input that matches it.`, failure: "bad_input" };
	} catch (err) {
		if (!(err instanceof InvalidToolSchemaError)) throw err;
		// Unchecked input is not sent: the operator's definition is at fault, and says so in the logs.
		log.warn("tool.webhook.bad_schema", { agent: ctx.agent.name, job_id: ctx.jobId, tool: tool.name, error_message: err.message });
		return { content: `webhook tool ${tool.name} is not configured correctly (its input_schema cannot be checked), so the call was not sent`, failure: "bad_schema" };
	}
}
