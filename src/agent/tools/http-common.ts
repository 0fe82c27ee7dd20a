/** What http_fetch and webhook tools share: the deadline, bounded body reads, error wording. */
import { abortable } from "../../shared/abortable.ts";
import { deadline, type Deadline } from "../../shared/deadline.ts";
import { fetchErrorMessage } from "../../shared/fetch-error.ts";

/** One deadline per tool call, covering connect, redirects and reading the body. */
export const TOOL_TIMEOUT_MS = 30_000;

/**
 * The call's deadline, or `cut` (a forced cancel) if it comes first. Nothing else aborts a tool call:
 * a plain cancel or the job's timeout waits for it (see settleTools), so a request that may have had
 * its effect is left with an unknown outcome only when an operator forces it.
 */
export function toolDeadline(cut?: AbortSignal): Deadline {
	return deadline(TOOL_TIMEOUT_MS, cut);
}

export interface CappedBody {
	bytes: Uint8Array;
	/** The body had more than `cap` bytes; only the first `cap` were kept. */
	truncated: boolean;
}

/**
 * Reads at most `cap` bytes of `body` and cancels the stream past that, so an endless or huge
 * response costs at most `cap` bytes of the isolate's 128 MB and no more network reads than needed.
 */
export async function readCapped(body: ReadableStream<Uint8Array> | null, cap: number, signal: AbortSignal): Promise<CappedBody> {
	if (!body) return { bytes: new Uint8Array(0), truncated: false };
	const reader = body.getReader();
	const chunks: Uint8Array[] = [];
	let total = 0;
	let truncated = false;
	let done = false;
	try {
		while (!done) {
			const next = await abortable(reader.read(), signal);
			if (next.done) {
				done = true;
				break;
			}
			const chunk = next.value;
			// Reaching exactly `cap` is not truncation unless more follows, so the loop reads once past
			// the cap; that read's bytes are dropped, not kept.
			if (total + chunk.byteLength > cap) {
				chunks.push(chunk.subarray(0, cap - total));
				total = cap;
				truncated = true;
				break;
			}
			chunks.push(chunk);
			total += chunk.byteLength;
		}
	} finally {
		// Tells the origin to stop sending; also settles a read left pending by an abort.
		if (!done) reader.cancel().catch(() => {});
	}
	const bytes = new Uint8Array(total);
	let offset = 0;
	for (const chunk of chunks) {
		bytes.set(chunk, offset);
		offset += chunk.byteLength;
	}
	return { bytes, truncated };
}

/** A failed request's kind for its tool.call line: timed out, cut off by a forced cancel, or the network. */
export function failureKind(signal: AbortSignal): "timeout" | "cut_off" | "network" {
	if (!signal.aborted) return "network";
	return signal.reason instanceof DOMException && signal.reason.name === "TimeoutError" ? "timeout" : "cut_off";
}

/**
 * Why a request failed, in words for the model: timed out, cut off by a forced cancel, or the
 * network error. For a request with an effect (`effectful`: a webhook tool's, a POST), a timeout or
 * a network error may come after the request reached its server: the model is told its effect is
 * unknown, as for a forced cut, since retried under a new tool call (a new idempotency key) it
 * could be made twice.
 */
export function failureReason(error: unknown, signal: AbortSignal, effectful = false): string {
	const unknown = effectful ? "; the request may have reached the server, so whether it took effect is unknown: check before making it again" : "";
	if (signal.aborted) {
		const timedOut = signal.reason instanceof DOMException && signal.reason.name === "TimeoutError";
		return timedOut ? `timed out after ${TOOL_TIMEOUT_MS / 1000} s${unknown}` : "cut off by a forced cancel";
	}
	return `network error: ${fetchErrorMessage(error)}${unknown}`;
}

/**
 * Decodes in `charset` (UTF-8 when absent or unsupported), replacing invalid bytes; a multi-byte
 * character cut by truncation is dropped rather than shown as a replacement character.
 */
export function decodeLenient(body: CappedBody, charset?: string): string {
	let decoder: TextDecoder;
	try {
		decoder = new TextDecoder(charset ?? "utf-8");
	} catch {
		decoder = new TextDecoder("utf-8");
	}
	return decoder.decode(body.bytes, { stream: body.truncated });
}
