import { z } from "@hono/zod-openapi";

// The format without zod, which the CLI checks its arguments by too.
import { hasRealDate, JOB_ID_FORMAT, JOB_ID_PATTERN } from "./id-format.ts";

export { isJobId, JOB_ID_FORMAT, JOB_ID_PATTERN } from "./id-format.ts";

export const JobIdSchema = z
	.string()
	.regex(JOB_ID_PATTERN, { error: `job id must be ${JOB_ID_FORMAT}` })
	// Only an id the pattern accepted has a date to check: anything else already has its issue.
	.refine((id) => !JOB_ID_PATTERN.test(id) || hasRealDate(id), {
		error: (issue) => `job id must be ${JOB_ID_FORMAT}: ${String(issue.input).slice(4, 14)} is not a date`,
	})
	.openapi({ description: `Job id: ${JOB_ID_FORMAT}`, example: "job-2025-01-15-k2x9qa" });
