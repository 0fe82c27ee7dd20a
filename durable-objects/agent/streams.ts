import { errorFields, log } from "../../src/log.ts";
import { MAX_LINE_BYTES, readLines } from "./runner/output.ts";
import { storedAgentName } from "./state.ts";

/** The state an SSE subscriber is told about besides lines. */
export interface JobPhase {
	status: string;
	revision: number;
	final: boolean;
}

/** A job's lines as the object no longer keeps them in SQLite (a consolidated job's, in R2), oldest first. */
export type ArchivedLines = AsyncIterable<{ line: number; body: string }>;

/**
 * Live streams one job may have. `npm run bench -- stream` watches one job with 100 subscribers,
 * the number the streaming goal is set at.
 */
export const MAX_STREAMS_PER_JOB = 100;
/** Live streams one agent's object may hold, over all its jobs. */
export const MAX_STREAMS_PER_AGENT = 500;
/**
 * The Retry-After of a stream refused at a cap. Slots free as other clients leave or their job
 * ends, which the object cannot foresee: half a minute, as for a full run queue.
 */
export const STREAM_RETRY_AFTER_SECONDS = 30;

/** A live send reads at most about this much of a job's new output (always at least one line). */
const LIVE_BATCH_BYTES = 1024 * 1024;
/**
 * A subscriber catching up is sent batches of about this much (or one line, if longer), the next
 * once it has taken the last. Streams at different lines hold different batches: 500 that stopped
 * reading hold about 32 MiB of batches this size, and CATCH_UP_BUDGET_BYTES bounds those of long lines.
 */
const REPLAY_BATCH_BYTES = 64 * 1024;
/** Rows a read takes at most, whatever their size. */
const BATCH_LINES = 100_000;
/**
 * A live subscriber with more than this waiting behind the write in progress is dropped: it is not
 * reading. It is more than one send can bring (LIVE_BATCH_BYTES and a line of up to MAX_LINE_BYTES),
 * so a reader is never dropped for a single burst of output, only for sends it has let pile up.
 */
export const MAX_BACKLOG_BYTES = 4 * 1024 * 1024;
/**
 * What catching-up streams may hold together, unwritten: a batch is a whole line at least, and a tool
 * result's line can be 1 MB or more, so 100 clients that stopped reading would hold 100 MB of an
 * object's 128. Past it, the streams stalled longest are dropped (they reconnect with Last-Event-ID).
 */
export const CATCH_UP_BUDGET_BYTES = 32 * 1024 * 1024;
/**
 * What all of an object's streams may hold together, unwritten, live and catching up. A job's live
 * streams in step share their sends, so one job holds at most about MAX_BACKLOG_BYTES and a send;
 * but an agent runs up to 100 jobs at once (max_concurrent): 16 jobs' stalled clients held 72 MB
 * (test/api/stream-limits.test.ts), so 100 would hold ~450 MB of an object's 128. Past it, the
 * streams with the most waiting are dropped.
 */
export const MAX_HELD_BYTES = 48 * 1024 * 1024;
if (MAX_BACKLOG_BYTES <= LIVE_BATCH_BYTES + MAX_LINE_BYTES) throw new Error("MAX_BACKLOG_BYTES must exceed what one send can bring");
if (MAX_HELD_BYTES <= CATCH_UP_BUDGET_BYTES + MAX_BACKLOG_BYTES) throw new Error("MAX_HELD_BYTES must leave live streams room beside those catching up");

interface Subscriber {
	jobId: string;
	/** The last line handed to the stream (written, or waiting in `pending`). */
	lastLine: number;
	/** The revision of the last status handed to the stream; -1 before the first. */
	lastRevision: number;
	writer: WritableStreamDefaultWriter<Uint8Array>;
	/** Ends the stream early (the client sees it close without an `end` event). */
	controller: TransformStreamDefaultController<Uint8Array>;
	/** Bytes handed to the stream and not yet taken by it, oldest first; the first is being written while `writing`. */
	pending: Uint8Array[];
	pendingBytes: number;
	writing: boolean;
	/** Sent new output as the job writes it (true), or catching up, batch by batch as it reads (false). */
	live: boolean;
	/** The `end` event is handed over: the stream closes once it is written. */
	ending: boolean;
	closed: boolean;
	/** Told when `pending` has been written (or the stream closed). */
	drainWaiters: (() => void)[];
	/** Its catch-up batches in `pending`: its own, shared with no other stream. */
	own: Set<Uint8Array>;
	ownBytes: number;
	/** When (in enqueues, hub-wide) it last had no catch-up batch waiting: the older, the longer it has stalled. */
	ownSince: number;
}

const encoder = new TextEncoder();
/** A comment line this often keeps idle streams (a job waiting hours for approval) through proxies. */
const KEEPALIVE_MS = 25_000;
const PING = encoder.encode(": ping\n\n");
const OPENING = encoder.encode(": drover job stream\nretry: 2000\n\n");

function concat(parts: Uint8Array[]): Uint8Array {
	if (parts.length === 1) return parts[0]!;
	const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
	let at = 0;
	for (const p of parts) {
		out.set(p, at);
		at += p.length;
	}
	return out;
}

// SSE frames are written here rather than with hono/streaming's writeSSE: a frame is encoded once per
// publish and shared by every subscriber of the job (up to 100), outside any Hono context.
function lineFrame(line: number, body: string): string {
	return `id: ${line}\nevent: line\ndata: ${body}\n\n`;
}

function statusFrame(phase: JobPhase): string {
	return `event: status\ndata: ${JSON.stringify({ status: phase.status, revision: phase.revision })}\n\n`;
}

/** Whether a read stopped at its limits rather than at the end of the output. */
function cutShort(rows: { body: string }[], maxBytes: number): boolean {
	return rows.length >= BATCH_LINES || (rows.length > 0 && rows.reduce((n, r) => n + r.body.length, 0) >= maxBytes);
}

/**
 * Live SSE subscribers of this agent's jobs. New lines are read from SQLite once per publish and the
 * same encoded frames go to every live subscriber of that job, so a hundred watchers cost one read.
 *
 * What the object holds for a stream is bounded. A subscriber starts by catching up (from SQLite,
 * or R2 once the job's output is consolidated), a batch at a time, the next only once the stream has
 * taken the last; then it is live. A live subscriber that lets more than MAX_BACKLOG_BYTES wait is
 * dropped: its stream is closed without the `end` event and what waited for it let go. Every line
 * event carries its line number as its `id`, and a stream asked for with Last-Event-ID (or ?after=)
 * starts just after that line, from SQLite or R2 alike (serveStream): a client that reconnects after
 * a drop (EventSource, the CLI and the dashboard do) resumes after the last line it got, with none
 * lost or repeated. Frames are handed over whole, so what a dropped client got ends at a line's end.
 */
export class StreamHub {
	private readonly byJob = new Map<string, Set<Subscriber>>();
	private count = 0;
	private readonly sql: SqlStorage;
	private readonly phaseOf: (jobId: string) => JobPhase | null;
	private readonly archived: (jobId: string, afterLine: number) => ArchivedLines | null;
	private keepalive: ReturnType<typeof setInterval> | null = null;
	/** Jobs with a send already queued for this turn of the event loop. */
	private readonly pending = new Set<string>();
	/** Catch-up bytes handed to streams and not yet taken, over all of them (see CATCH_UP_BUDGET_BYTES). */
	private ownHeld = 0;
	private enqueues = 0;
	/** Each buffer streams hold (a send is shared by a job's streams in step), with how many hold it. */
	private readonly holders = new Map<Uint8Array, number>();
	/** The bytes of those buffers, each counted once (see MAX_HELD_BYTES). */
	private held = 0;

	/**
	 * `archived` gives a job's lines after a line from where they are kept once SQLite no longer has
	 * them (R2), or null while SQLite does.
	 */
	constructor(sql: SqlStorage, phaseOf: (jobId: string) => JobPhase | null, archived: (jobId: string, afterLine: number) => ArchivedLines | null = () => null) {
		this.sql = sql;
		this.phaseOf = phaseOf;
		this.archived = archived;
	}

	/** Open streams, over all jobs. */
	get size(): number {
		return this.count;
	}

	/** Why a new stream of `jobId` is refused (a cap is reached), or null if it may open. */
	refusal(jobId: string): string | null {
		const ofJob = this.byJob.get(jobId)?.size ?? 0;
		if (ofJob >= MAX_STREAMS_PER_JOB) {
			return `job ${jobId} already has ${ofJob} live streams, the most one job may have (${MAX_STREAMS_PER_JOB}): close one, or try again after Retry-After`;
		}
		if (this.count >= MAX_STREAMS_PER_AGENT) {
			return `this agent's jobs already have ${this.count} live streams, the most one agent may have (${MAX_STREAMS_PER_AGENT}): close one, or try again after Retry-After`;
		}
		return null;
	}

	/** Opens a stream for a job from just after `afterLine`. The caller checks `refusal` first. */
	subscribe(jobId: string, afterLine: number): ReadableStream<Uint8Array> {
		let controller!: TransformStreamDefaultController<Uint8Array>;
		const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>({ start: (c) => void (controller = c) });
		const sub: Subscriber = {
			jobId,
			controller,
			lastLine: afterLine,
			lastRevision: -1,
			writer: writable.getWriter(),
			pending: [],
			pendingBytes: 0,
			writing: false,
			live: false,
			ending: false,
			closed: false,
			drainWaiters: [],
			own: new Set(),
			ownBytes: 0,
			ownSince: 0,
		};
		let subs = this.byJob.get(jobId);
		if (!subs) this.byJob.set(jobId, (subs = new Set()));
		subs.add(sub);
		this.count++;
		// The client went away (the stream was cancelled).
		sub.writer.closed.catch(() => this.remove(sub));
		this.keepalive ??= setInterval(() => this.ping(), KEEPALIVE_MS);
		this.enqueue(sub, OPENING);
		void this.catchUp(sub, false);
		return readable;
	}

	/**
	 * Sends every live subscriber of `jobId` the lines and status it has not seen yet. Calls made in
	 * one burst of work (a line, then the record, then another line) are coalesced into one send.
	 */
	publish(jobId: string): void {
		if (this.pending.has(jobId)) return;
		this.pending.add(jobId);
		queueMicrotask(() => {
			this.pending.delete(jobId);
			this.send(jobId);
		});
	}

	private send(jobId: string): void {
		const subs = [...(this.byJob.get(jobId) ?? [])].filter((s) => s.live && !s.ending && !s.closed);
		if (subs.length === 0) return;
		const from = Math.min(...subs.map((s) => s.lastLine));
		const rows = readLines(this.sql, jobId, from, BATCH_LINES, LIVE_BATCH_BYTES);
		const frames = rows.map((r) => ({ line: r.line, frame: encoder.encode(lineFrame(r.line, r.body)) }));
		// The status follows the lines it describes: only a read that reached the end of the output sends it.
		const cut = cutShort(rows, LIVE_BATCH_BYTES);
		const phase = cut ? null : this.phaseOf(jobId);
		const status = phase ? encoder.encode(statusFrame(phase)) : null;
		const end = phase?.final ? encoder.encode(`event: end\ndata: ${JSON.stringify({ status: phase.status })}\n\n`) : null;
		// Subscribers that have seen the same lines and revision get the very same bytes: with a hundred
		// watchers in step, one payload is built and handed to each of them.
		const payloads = new Map<string, Uint8Array | null>();
		const payloadFor = (lastLine: number, lastRevision: number): Uint8Array | null => {
			const key = `${lastLine}:${lastRevision}`;
			if (payloads.has(key)) return payloads.get(key)!;
			const parts = frames.filter((f) => f.line > lastLine).map((f) => f.frame);
			if (status && phase!.revision !== lastRevision) parts.push(status);
			if (end) parts.push(end);
			const payload = parts.length === 0 ? null : concat(parts);
			payloads.set(key, payload);
			return payload;
		};
		const lastLine = frames.at(-1)?.line;
		for (const sub of subs) {
			// One write per send, not per line or per frame kind.
			const payload = payloadFor(sub.lastLine, sub.lastRevision);
			if (payload) {
				const waiting = sub.pendingBytes - (sub.writing ? (sub.pending[0]?.length ?? 0) : 0);
				if (waiting > MAX_BACKLOG_BYTES) {
					log.warn("stream.dropped", { agent: storedAgentName(this.sql), job_id: jobId, waiting_bytes: waiting, limit_bytes: MAX_BACKLOG_BYTES, last_line_queued: sub.lastLine });
					this.endEarly(sub);
					continue;
				}
				this.enqueue(sub, payload);
			}
			if (lastLine !== undefined && lastLine > sub.lastLine) sub.lastLine = lastLine;
			if (phase) sub.lastRevision = phase.revision;
			if (end) sub.ending = true;
			// The rest of a burst bigger than one read goes as it is taken, as when catching up.
			if (cut) {
				sub.live = false;
				void this.catchUp(sub, true);
			}
		}
		this.keepWithinHeldBudget(jobId);
	}

	/**
	 * Drops the streams with the most waiting while all streams together hold more than
	 * MAX_HELD_BYTES. A buffer shared by several is let go only with the last of them, so a stalled
	 * crowd of one job is dropped whole; a reading stream, holding at most its latest send, is last.
	 */
	private keepWithinHeldBudget(jobId: string): void {
		while (this.held > MAX_HELD_BYTES) {
			let most: Subscriber | null = null;
			for (const subs of this.byJob.values()) {
				for (const s of subs) if (s.pendingBytes > 0 && (most === null || s.pendingBytes > most.pendingBytes)) most = s;
			}
			if (!most) return;
			log.warn("stream.dropped", { agent: storedAgentName(this.sql), job_id: most.jobId, waiting_bytes: most.pendingBytes, held_bytes: this.held, limit_bytes: MAX_HELD_BYTES, last_line_queued: most.lastLine, sending_job_id: jobId });
			this.endEarly(most);
		}
	}

	/**
	 * Sends a subscriber the lines after its `lastLine` a batch at a time, each once the stream has
	 * taken the one before (first waiting for what it holds already, if `drainFirst`), then makes it
	 * live. Nothing piles up for a client that reads slowly or not at all.
	 */
	private async catchUp(sub: Subscriber, drainFirst: boolean): Promise<void> {
		try {
			if (drainFirst) await this.drained(sub);
			for (;;) {
				if (sub.closed) return;
				const archived = this.archived(sub.jobId, sub.lastLine);
				if (archived) {
					// Consolidated: every line is in R2 and none is left in SQLite.
					await this.replay(sub, archived);
					break;
				}
				const rows = readLines(this.sql, sub.jobId, sub.lastLine, BATCH_LINES, REPLAY_BATCH_BYTES);
				if (rows.length > 0) {
					this.enqueueOwn(sub, concat(rows.map((r) => encoder.encode(lineFrame(r.line, r.body)))));
					sub.lastLine = rows.at(-1)!.line;
				}
				// Caught up as of this read: live from here, in the same turn, so no line falls between.
				if (!cutShort(rows, REPLAY_BATCH_BYTES)) break;
				await this.drained(sub);
			}
			if (sub.closed) return;
			sub.live = true;
			this.publish(sub.jobId);
		} catch (err) {
			// An archived output that failed to read: the client reconnects and the read is tried again.
			log.warn("stream.catch_up_failed", { agent: storedAgentName(this.sql), job_id: sub.jobId, ...errorFields(err) });
			this.endEarly(sub);
		}
	}

	private async replay(sub: Subscriber, lines: ArchivedLines): Promise<void> {
		let batch: Uint8Array[] = [];
		let bytes = 0;
		let last = sub.lastLine;
		for await (const l of lines) {
			if (sub.closed) return;
			if (l.line <= last) continue;
			const frame = encoder.encode(lineFrame(l.line, l.body));
			batch.push(frame);
			bytes += frame.length;
			last = l.line;
			if (bytes >= REPLAY_BATCH_BYTES) {
				this.enqueueOwn(sub, concat(batch));
				sub.lastLine = last;
				batch = [];
				bytes = 0;
				await this.drained(sub);
			}
		}
		if (batch.length > 0 && !sub.closed) {
			this.enqueueOwn(sub, concat(batch));
			sub.lastLine = last;
		}
	}

	/** Bytes handed to streams and not yet taken by them, each buffer counted once however many share it. */
	heldBytes(): number {
		return this.held;
	}

	/** Every job with subscribers, to publish after work that may have touched any of them. */
	watchedJobs(): string[] {
		return [...this.byJob.keys()];
	}

	/**
	 * Hands a catch-up batch to the stream, then drops the streams stalled longest while catching-up
	 * streams together hold more than CATCH_UP_BUDGET_BYTES (this one too, if it is among them), and
	 * any with the most waiting while all streams hold more than MAX_HELD_BYTES.
	 */
	private enqueueOwn(sub: Subscriber, bytes: Uint8Array): void {
		if (sub.ownBytes === 0) sub.ownSince = ++this.enqueues;
		sub.own.add(bytes);
		sub.ownBytes += bytes.length;
		this.ownHeld += bytes.length;
		this.enqueue(sub, bytes);
		while (this.ownHeld > CATCH_UP_BUDGET_BYTES) {
			let oldest: Subscriber | null = null;
			for (const subs of this.byJob.values()) {
				for (const s of subs) if (s.ownBytes > 0 && (oldest === null || s.ownSince < oldest.ownSince)) oldest = s;
			}
			if (!oldest) break;
			log.warn("stream.dropped", { agent: storedAgentName(this.sql), job_id: oldest.jobId, waiting_bytes: oldest.ownBytes, catching_up_bytes: this.ownHeld, limit_bytes: CATCH_UP_BUDGET_BYTES, last_line_queued: oldest.lastLine });
			this.endEarly(oldest);
		}
		// Within its own budget, a batch can still take all streams past theirs (live ones holding the rest).
		this.keepWithinHeldBudget(sub.jobId);
	}

	/** Hands bytes to the stream; they are written in order, one write at a time. */
	private enqueue(sub: Subscriber, bytes: Uint8Array): void {
		sub.pending.push(bytes);
		sub.pendingBytes += bytes.length;
		const holders = this.holders.get(bytes) ?? 0;
		if (holders === 0) this.held += bytes.length;
		this.holders.set(bytes, holders + 1);
		if (!sub.writing) void this.pump(sub);
	}

	/** A stream has taken, or let go of, a buffer it held. */
	private letGo(bytes: Uint8Array): void {
		const holders = (this.holders.get(bytes) ?? 1) - 1;
		if (holders > 0) {
			this.holders.set(bytes, holders);
			return;
		}
		this.holders.delete(bytes);
		this.held -= bytes.length;
	}

	private async pump(sub: Subscriber): Promise<void> {
		sub.writing = true;
		try {
			while (!sub.closed && sub.pending.length > 0) {
				const bytes = sub.pending[0]!;
				await sub.writer.write(bytes);
				if (sub.closed) break;
				sub.pending.shift();
				sub.pendingBytes -= bytes.length;
				this.letGo(bytes);
				if (sub.own.delete(bytes)) this.releaseOwn(sub, bytes.length);
			}
			if (sub.ending && !sub.closed) {
				this.remove(sub);
				await sub.writer.close();
			}
		} catch {
			this.remove(sub);
		} finally {
			sub.writing = false;
			for (const wake of sub.drainWaiters.splice(0)) wake();
		}
	}

	private releaseOwn(sub: Subscriber, bytes: number): void {
		sub.ownBytes -= bytes;
		this.ownHeld -= bytes;
	}

	/** Resolves once everything handed to the stream is written, or the stream is closed. */
	private drained(sub: Subscriber): Promise<void> {
		if (sub.closed || (!sub.writing && sub.pending.length === 0)) return Promise.resolve();
		return new Promise((resolve) => sub.drainWaiters.push(resolve));
	}

	private ping(): void {
		for (const subs of this.byJob.values()) {
			for (const sub of subs) {
				// A stream with bytes on their way needs no ping; one that has not taken them gets none.
				if (!sub.ending && !sub.writing && sub.pending.length === 0) this.enqueue(sub, PING);
			}
		}
	}

	/**
	 * Ends a stream without its `end` event, letting go of what waited for it: the client sees it
	 * close (after any whole frames already on their way) and reconnects after the last line it got.
	 */
	private endEarly(sub: Subscriber): void {
		if (sub.closed) return;
		this.remove(sub);
		// Closes the side the client reads and fails the write in progress.
		try {
			sub.controller.terminate();
		} catch {
			// The client cancelled it in the meantime: nothing left to close.
		}
	}

	/** Forgets a stream (ended, cancelled, failed or dropped), freeing its slot. */
	private remove(sub: Subscriber): void {
		if (sub.closed) return;
		sub.closed = true;
		for (const bytes of sub.pending) this.letGo(bytes);
		sub.pending = [];
		sub.pendingBytes = 0;
		sub.own.clear();
		this.releaseOwn(sub, sub.ownBytes);
		const subs = this.byJob.get(sub.jobId);
		if (subs?.delete(sub)) {
			this.count--;
			if (subs.size === 0) this.byJob.delete(sub.jobId);
		}
		for (const wake of sub.drainWaiters.splice(0)) wake();
		if (this.count === 0 && this.keepalive !== null) {
			clearInterval(this.keepalive);
			this.keepalive = null;
		}
	}
}
