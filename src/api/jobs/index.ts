import { createApi } from "../factory.ts";
import { jobApi } from "./job.ts";
import { jobManifestApi } from "./manifest.ts";
import { jobOutputLogApi } from "./output-log.ts";
import { jobToolCallsApi } from "./tool-calls.ts";

/** /v1/jobs: the job list, a job and its actions, output and stream, its manifest, tool calls and output.log. */
export const jobsApi = createApi().route("/", jobApi).route("/", jobManifestApi).route("/", jobToolCallsApi).route("/", jobOutputLogApi);
