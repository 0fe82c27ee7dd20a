import { BATCH_BYTES, readLines } from "./runner/output.ts";

/** The state an SSE subscriber is told about besides lines. */
export interface JobPhase {
	status: string;
	revision: number;
	final: boolean;
}

interface Subscriber {
	jobId: string;
	lastLine: number;
	lastRevision: number;
	writer: WritableStreamDefaultWriter<Uint8Array>;
	/** Writes are chained so frames leave in order without blocking the object. */
	queue: Promise<void>;
	closed: boolean;
}

const encoder = new TextEncoder();
/** A comment line this often keeps idle streams (a job waiting hours for approval) through proxies. */
const KEEPALIVE_MS = 25_000;
const PING = encoder.encode(": ping\n\n");

function concat(parts: Uint8Array[]): Uint8Array {
	const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
	let at = 0;
	for (const p of parts) {
		out.set(p, at);
		at += p.length;
	}
	return out;
}

export function lineFrame(line: number, body: string): string {
	return `id: ${line}\nevent: line\ndata: ${body}\n\n`;
}

function statusFrame(phase: JobPhase): string {
	return `event: status\ndata: ${JSON.stringify({ status: phase.status, revision: phase.revision })}\n\n`;
}

/**
 * Live SSE subscribers of this agent's jobs. New lines are read from SQLite once per publish and the
 * same encoded frames go to every subscriber of that job, so a hundred watchers cost one read.
 */
export class StreamHub {
	private readonly subscribers = new Set<Subscriber>();
	private readonly sql: SqlStorage;
	private readonly phaseOf: (jobId: string) => JobPhase | null;
	private keepalive: ReturnType<typeof setInterval> | null = null;
	/** Jobs with a send already queued for this turn of the event loop. */
	private readonly pending = new Set<string>();

	constructor(sql: SqlStorage, phaseOf: (jobId: string) => JobPhase | null) {
		this.sql = sql;
		this.phaseOf = phaseOf;
	}

	get size(): number {
		return this.subscribers.size;
	}

	/**
	 * Opens a stream for a job from just after `afterLine`. `backlog` yields the lines the object no
	 * longer keeps in SQLite (a finished job's output lives in R2), oldest first.
	 */
	subscribe(jobId: string, afterLine: number, backlog?: AsyncIterable<{ line: number; body: string }>): ReadableStream<Uint8Array> {
		const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
		const sub: Subscriber = { jobId, lastLine: afterLine, lastRevision: -1, writer: writable.getWriter(), queue: Promise.resolve(), closed: false };
		sub.queue = (async () => {
			await sub.writer.write(encoder.encode(": drover job stream\nretry: 2000\n\n"));
			if (backlog) {
				for await (const l of backlog) {
					if (l.line <= sub.lastLine) continue;
					await sub.writer.write(encoder.encode(lineFrame(l.line, l.body)));
					sub.lastLine = l.line;
				}
			}
		})().catch(() => this.drop(sub));
		sub.writer.closed.catch(() => this.drop(sub));
		this.subscribers.add(sub);
		this.keepalive ??= setInterval(() => this.ping(), KEEPALIVE_MS);
		this.publish(jobId);
		return readable;
	}

	/**
	 * Sends every subscriber of `jobId` the lines and status it has not seen yet. Calls made in one
	 * burst of work (a line, then the record, then another line) are coalesced into one send.
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
		const subs = [...this.subscribers].filter((s) => s.jobId === jobId && !s.closed);
		if (subs.length === 0) return;
		const from = Math.min(...subs.map((s) => s.lastLine));
		const rows = readLines(this.sql, jobId, from, 100_000);
		const frames = rows.map((r) => ({ line: r.line, frame: encoder.encode(lineFrame(r.line, r.body)) }));
		// A read is bounded in bytes; when it stopped short, the rest follows once these frames are out.
		const more = rows.length > 0 && rows.reduce((n, r) => n + r.body.length, 0) >= BATCH_BYTES;
		const phase = more ? null : this.phaseOf(jobId);
		const status = phase ? encoder.encode(statusFrame(phase)) : null;
		const end = phase?.final ? encoder.encode(`event: end\ndata: ${JSON.stringify({ status: phase.status })}\n\n`) : null;
		// Subscribers that have seen the same lines and revision get the very same bytes: with a hundred
		// watchers in step, one payload is built and written a hundred times.
		const payloads = new Map<string, Uint8Array | null>();
		const payloadFor = (lastLine: number, lastRevision: number): Uint8Array | null => {
			const key = `${lastLine}:${lastRevision}`;
			if (payloads.has(key)) return payloads.get(key)!;
			const parts = frames.filter((f) => f.line > lastLine).map((f) => f.frame);
			if (status && phase!.revision !== lastRevision) parts.push(status);
			if (end) parts.push(end);
			const payload = parts.length === 0 ? null : parts.length === 1 ? parts[0]! : concat(parts);
			payloads.set(key, payload);
			return payload;
		};
		const lastLine = frames.at(-1)?.line;
		for (const sub of subs) {
			sub.queue = sub.queue
				.then(async () => {
					if (sub.closed) return;
					const payload = payloadFor(sub.lastLine, sub.lastRevision);
					// One write per publish, not per line or per frame kind.
					if (payload) await sub.writer.write(payload);
					if (lastLine !== undefined && lastLine > sub.lastLine) sub.lastLine = lastLine;
					if (phase) sub.lastRevision = phase.revision;
					if (end) {
						this.drop(sub);
						await sub.writer.close();
					}
				})
				.catch(() => this.drop(sub));
		}
		if (more) void Promise.all(subs.map((sub) => sub.queue)).then(() => this.publish(jobId));
	}

	/** Every job with subscribers, to publish after work that may have touched any of them. */
	watchedJobs(): string[] {
		return [...new Set([...this.subscribers].map((s) => s.jobId))];
	}

	private ping(): void {
		for (const sub of this.subscribers) {
			sub.queue = sub.queue.then(() => (sub.closed ? undefined : sub.writer.write(PING))).catch(() => this.drop(sub));
		}
	}

	private drop(sub: Subscriber): void {
		sub.closed = true;
		this.subscribers.delete(sub);
		if (this.subscribers.size === 0 && this.keepalive !== null) {
			clearInterval(this.keepalive);
			this.keepalive = null;
		}
	}
}
