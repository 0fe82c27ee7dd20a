import { z } from "@hono/zod-openapi";
import { agentRpc } from "../../../durable-objects/agent/client.ts";
import { ConflictError, NotFoundError, RangeNotSatisfiableError } from "../../errors.ts";
import { isFinal, JobIdSchema } from "../../jobs/model.ts";
import { getJobSummary } from "../../store/job-index.ts";
import { requestedRange } from "../../shared/range.ts";
import { contentRange, outputLogKey, readRange } from "../../store/output-r2.ts";
import { createApi, withRole } from "../factory.ts";
import { conflictResponse, ErrorSchema, notFoundResponse } from "../schemas.ts";
import { noJob } from "./not-found.ts";

/** What a log's answer carries for a later ranged request. */
const LogHeaders = z.object({
	ETag: z.string().openapi({ description: "The log's version, for If-Range" }),
	"Accept-Ranges": z.literal("bytes"),
});

/** GET /v1/jobs/:id/output.log, mounted beside the job routes. */
export const jobOutputLogApi = createApi().openapi(
	withRole("read", {
		method: "get",
		operationId: "getJobOutputLog",
		path: "/{id}/output.log",
		summary: "The job's plain-text log (herdctl's output.log), kept when its schedule or agent sets output_to_file",
		description:
			"Written to R2 once the job ends, beside its JSONL output (the record's `output_log` names it): each output line as a timestamped entry, whole. " +
			"404 for a job that keeps none; 409 while it runs, and for the moment after it ends while the log is written. " +
			"Honours one bytes `Range` (a download resumed, or the log's end with `bytes=-N`), with `If-Range` naming the ETag of the version the client holds.",
		request: {
			params: z.object({ id: JobIdSchema }),
			headers: z.object({
				range: z.string().optional().openapi({ description: "One bytes range; several, or an invalid one, get the whole log" }),
				"if-range": z.string().optional().openapi({ description: "The log's ETag: the range only if the log is still that version, else the whole log" }),
			}),
		},
		responses: {
			200: { description: "The log, one entry per output line", content: { "text/plain": { schema: z.string() } }, headers: LogHeaders },
			206: {
				description: "The requested byte range of the log",
				content: { "text/plain": { schema: z.string() } },
				headers: LogHeaders.extend({ "Content-Range": z.string().openapi({ description: "bytes <first>-<last>/<size>" }) }),
			},
			416: {
				description: "The range starts at or past the end of the log, or is bytes=-0",
				content: { "application/json": { schema: ErrorSchema } },
				headers: z.object({ "Content-Range": z.string().openapi({ description: "bytes */<size>" }) }),
			},
			...notFoundResponse,
			...conflictResponse,
		},
	}),
	async (c) => {
		const { id } = c.req.valid("param");
		const summary = await getJobSummary(c.env.DB, id);
		if (!summary) throw noJob(c.env, id);
		// Straight from R2 when it is there: the agent's object is asked only to say why it is not.
		const key = outputLogKey(summary.agent, id);
		if (c.req.method === "HEAD") {
			// Hono answers a HEAD with this handler, its body dropped: R2's head alone gives the headers.
			const head = await c.env.OUTPUT.head(key);
			if (head) return new Response(null, { headers: logHeaders(id, head.httpEtag, head.size) }) as never;
		} else {
			const { range, ifRange } = requestedRange(c.req.raw);
			const read = await readRange(c.env.OUTPUT, key, range, ifRange);
			if (read && "unsatisfiable" in read) throw new RangeNotSatisfiableError(range!, read.unsatisfiable, `job ${id}'s output.log`);
			if (read) {
				const { object, partial } = read;
				const headers = logHeaders(id, object.httpEtag, object.range.length);
				if (partial) headers["content-range"] = contentRange(object);
				// @hono/zod-openapi takes no plain Response where every status's content is declared.
				return new Response(object.body, { status: partial ? 206 : 200, headers }) as never;
			}
		}
		const job = await agentRpc(c.env, summary.agent).getJob(id);
		if (!job) throw noJob(c.env, id);
		if (job.output_log === null) {
			const why = job.started_at === null ? "it never started" : "output_to_file was not set on its schedule or agent when it started";
			throw new NotFoundError(`job ${id} keeps no plain-text log (${why}); its JSONL output is at /v1/jobs/${id}/output`);
		}
		if (!isFinal(job.status)) {
			throw new ConflictError(`job ${id} is ${job.status}: its plain-text log is written when it ends; follow its output meanwhile at /v1/jobs/${id}/stream`);
		}
		throw new ConflictError(`job ${id} has just ended and its plain-text log is still being written; ask again in a few seconds`);
	},
);

function logHeaders(id: string, etag: string, length: number): Record<string, string> {
	return {
		"content-type": "text/plain; charset=utf-8",
		"content-length": String(length),
		"content-disposition": `inline; filename="${id}.log"`,
		"accept-ranges": "bytes",
		etag,
	};
}
