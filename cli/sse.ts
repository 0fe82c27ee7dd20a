import { SseParser } from "../src/shared/sse.ts";
import { ApiError, CliError, EXIT_LOST, NoAnswerError, networkReason, worthRetrying, type ApiClient } from "./client.ts";

export interface FollowOptions {
	/** The last line already seen: the stream resumes after it (0 = from the start). */
	after?: number;
	onLine(line: number, body: string): void;
	onStatus?(status: string): void;
	/**
	 * Called after the events of each piece of the stream that arrived together (the server writes a
	 * job's new lines and then its status at once): a place to show the state they add up to.
	 */
	onBatch?(): void;
	/** Told each time a stream opens (the first, and each after a reconnect). */
	onOpen?(): void;
	/** Told before each reconnect, e.g. to say so on stderr. */
	onReconnect?(info: { after: number; attempt: number; reason: string; delayMs: number }): void;
	/** Reconnects without progress before giving up (default 30; Infinity: never, as `logs <agent> --follow`). */
	retries?: number;
	/**
	 * A connection that stayed open this long counts as healthy even if it brought nothing new
	 * (default 10 s): a job waiting hours for an approval is silent, and proxies (and fetch's own
	 * body timeout) cut silent streams; only quick failures in a row use up the retries.
	 */
	healthyAfterMs?: number;
	/**
	 * Delay before the nth consecutive reconnect (default 250 ms doubling, at most 5 s), or what a
	 * 429's or 503's Retry-After asks if longer (up to 5 minutes).
	 */
	backoffMs?(attempt: number): number;
	/** Waits between connections (tests pass their own, to check the delays without sitting them out). */
	sleep?(ms: number, signal?: AbortSignal): Promise<void>;
	signal?: AbortSignal;
	/**
	 * The server already answered in this command (trigger's POST, the lookup of an agent's newest
	 * job): a first connection that fails is then a restart to ride out. Without it, a first
	 * connection that fails before any stream opened throws at once, as the same request would
	 * without --follow: a wrong URL or a stopped server is not worth two minutes of reconnects.
	 */
	serverAnswered?: boolean;
	/**
	 * This command just created the job (trigger, continue, fork, resume --wait). Its agent indexes it
	 * in D1 before answering, but keeps the row and retries (every 10 s) when D1 refuses it, and the
	 * stream's route finds a job by that index: until then it is a 404, which is retried, within
	 * `retries`, until a stream has opened. Any other 404 is final.
	 */
	created?: boolean;
}

export interface FollowResult {
	/** The final status from the `end` event. */
	status: string;
	lastLine: number;
}

const defaultBackoff = (attempt: number) => Math.min(5_000, 250 * 2 ** (attempt - 1));
/**
 * Reconnects in a row, with no progress, before giving up: with the backoff above, about two minutes,
 * enough for a deploy or a restarted `wrangler dev` (~20 s). Five (8 s) gave up on jobs that then
 * completed, and `--wait` exited 1 for them.
 */
const DEFAULT_RETRIES = 30;

/**
 * The longest a Retry-After is waited: a stream refused at its cap asks 30 s; a proxy's odd value
 * must not hold the command for hours.
 */
const MAX_RETRY_AFTER_MS = 5 * 60_000;

const sleep = (ms: number, signal?: AbortSignal) =>
	new Promise<void>((resolve, reject) => {
		if (signal?.aborted) return reject(signal.reason);
		const timer = setTimeout(resolve, ms);
		signal?.addEventListener("abort", () => (clearTimeout(timer), reject(signal.reason)), { once: true });
	});

/**
 * Follows GET /v1/jobs/:id/stream to the job's `end` event. A dropped connection (or a stream that
 * closes early) is reopened with Last-Event-ID = the last line seen, so no line is repeated or
 * lost; a line the server sends again anyway is skipped. Reconnects back off and are bounded:
 * after `retries` quick attempts in a row that brought no new line or status, it gives up (CliError,
 * exit code EXIT_LOST).
 * Errors that retrying cannot fix (404, 401, 403, 400) are thrown at once, and so is any error before
 * a stream ever opened (unless `serverAnswered`).
 */
export async function followJob(client: ApiClient, jobId: string, options: FollowOptions): Promise<FollowResult> {
	const retries = options.retries ?? DEFAULT_RETRIES;
	const backoff = options.backoffMs ?? defaultBackoff;
	const healthyAfter = options.healthyAfterMs ?? 10_000;
	let last = options.after ?? 0;
	let lastStatus: string | null = null;
	let failures = 0;
	let everOpened = options.serverAnswered === true;
	let streamed = false;
	for (;;) {
		let progressed = false;
		let ended: string | null = null;
		let reason = "the stream closed before the job ended";
		let openedAt: number | null = null;
		let retryAfter = 0;
		try {
			const path = `/v1/jobs/${encodeURIComponent(jobId)}/stream`;
			const res = await client.fetch(path, {
				headers: { accept: "text/event-stream", ...(last > 0 ? { "last-event-id": String(last) } : {}) },
				timeoutMs: null,
				signal: options.signal,
			});
			// Anything else (a catch-all's 200 `{}`) would "close before the job ended" over and over.
			const type = res.headers.get("content-type") ?? "";
			if (!type.startsWith("text/event-stream")) {
				await res.body?.cancel().catch(() => {});
				throw client.notDrover(`GET ${path}: answered ${type ? type.split(";")[0] : "without a content type"}, not an event stream`);
			}
			openedAt = Date.now();
			everOpened = true;
			streamed = true;
			options.onOpen?.();
			const parser = new SseParser((ev) => {
				if (ended !== null) return;
				if (ev.event === "line") {
					// A frame without a usable id cannot be resumed after; print it rather than lose it. (No id at
					// all is not line 0: Number(null) and Number("") are 0, which every line seen is past.)
					const n = ev.id === null || ev.id === "" ? Number.NaN : Number(ev.id);
					if (!Number.isInteger(n)) {
						options.onLine(last, ev.data);
						return;
					}
					if (n <= last) return;
					last = n;
					progressed = true;
					options.onLine(n, ev.data);
				} else if (ev.event === "status") {
					const status = parseStatus(ev.data);
					if (status !== null && status !== lastStatus) {
						lastStatus = status;
						progressed = true;
						options.onStatus?.(status);
					}
				} else if (ev.event === "end") {
					ended = parseStatus(ev.data) ?? lastStatus ?? "unknown";
				}
			});
			if (!res.body) throw new Error("the stream answered without a body");
			const decoder = new TextDecoder();
			for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
				parser.feed(decoder.decode(chunk, { stream: true }));
				if (ended !== null) break;
				options.onBatch?.();
			}
			if (ended !== null) return { status: ended, lastLine: last };
		} catch (err) {
			if (options.signal?.aborted) throw err;
			if (!everOpened) throw err;
			if (err instanceof ApiError) {
				const unindexed = err.status === 404 && options.created === true && !streamed;
				if (!unindexed && !worthRetrying(err)) throw err;
				reason = unindexed ? `job ${jobId} is not in the API's index yet (its agent writes it there once D1 takes it): ${err.message}` : err.message;
				// Sooner is refused again (the stream's slots are taken) and only uses up the retries.
				if (err.retryAfterMs !== null) retryAfter = Math.min(err.retryAfterMs, MAX_RETRY_AFTER_MS);
			} else if (err instanceof CliError) {
				// Unreachable server: worth retrying, like a dropped connection (not a certificate no retry mends).
				if (!(err instanceof NoAnswerError)) throw err;
				reason = err.message;
			} else {
				reason = `the connection broke: ${networkReason(err)}`;
			}
		}
		if (openedAt !== null && Date.now() - openedAt >= healthyAfter) progressed = true;
		failures = progressed ? 1 : failures + 1;
		if (failures > retries) {
			// Not the job's outcome, which is unknown: its own exit code, so a script can tell the two apart.
			throw new CliError(
				`lost the stream of job ${jobId} after ${retries} reconnects (last line seen: ${last}): ${reason}`,
				EXIT_LOST,
				`the job may still be running: drover job ${jobId} says how it stands, drover logs --job ${jobId} --follow --from ${last + 1} goes on after the last line seen`,
			);
		}
		const delayMs = Math.max(backoff(failures), retryAfter);
		options.onReconnect?.({ after: last, attempt: failures, reason, delayMs });
		await (options.sleep ?? sleep)(delayMs, options.signal);
	}
}

function parseStatus(data: string): string | null {
	try {
		const v = JSON.parse(data) as { status?: unknown };
		return typeof v.status === "string" ? v.status : null;
	} catch {
		return null;
	}
}
