import { z } from "@hono/zod-openapi";
import { agentRpc } from "../../../durable-objects/agent/client.ts";
import { ConflictError, NotFoundError } from "../../errors.ts";
import { isFinal, JobIdSchema } from "../../jobs/model.ts";
import { getJobSummary } from "../../store/job-index.ts";
import { outputLogKey } from "../../store/output-r2.ts";
import { createApi, withRole } from "../factory.ts";
import { conflictResponse, notFoundResponse } from "../schemas.ts";

/** GET /v1/jobs/:id/output.log, mounted beside the job routes. */
export const jobOutputLogApi = createApi().openapi(
	withRole("read", {
		method: "get",
		path: "/{id}/output.log",
		summary: "The job's plain-text log (herdctl's output.log), kept when its schedule or agent sets output_to_file",
		description:
			"Written to R2 once the job ends, beside its JSONL output (the record's `output_log` names it): each output line as a timestamped entry, whole. " +
			"404 for a job that keeps none; 409 while it runs, and for the moment after it ends while the log is written.",
		request: { params: z.object({ id: JobIdSchema }) },
		responses: {
			200: { description: "The log, one entry per output line", content: { "text/plain": { schema: z.string() } } },
			...notFoundResponse,
			...conflictResponse,
		},
	}),
	async (c) => {
		const { id } = c.req.valid("param");
		const summary = await getJobSummary(c.env.DB, id);
		if (!summary) throw new NotFoundError(`no job ${id}`);
		// Straight from R2 when it is there: the agent's object is asked only to say why it is not.
		const object = await c.env.OUTPUT.get(outputLogKey(summary.agent, id));
		if (object) {
			// @hono/zod-openapi takes no plain Response where every status's content is declared.
			return new Response(object.body, {
				headers: {
					"content-type": "text/plain; charset=utf-8",
					"content-length": String(object.size),
					"content-disposition": `inline; filename="${id}.log"`,
					etag: object.httpEtag,
				},
			}) as never;
		}
		const job = await agentRpc(c.env, summary.agent).getJob(id);
		if (!job) throw new NotFoundError(`no job ${id}`);
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
