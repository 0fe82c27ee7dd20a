// The dashboard's only script, served at /ui/app.js: the pages are server-rendered shells, and it
// fills them from the JSON API with the signed-in token.
//
// Its source is the *.client.js files here, by role: plain browser scripts (not modules) that share
// one scope, type-checked on their own (tsconfig.json here, run by `npm run check`), bundled into
// the Worker as text (the `rules` in wrangler.toml) and joined in the order below inside one
// strict-mode function, so no name leaks onto the page's window. A file uses only what the files
// before it declare when it runs; functions may call ahead, as they run later.
//
// Rules they keep: the token lives in sessionStorage and leaves only as an Authorization header
// (never in a URL); text from the API reaches the page only through textContent/attributes, never
// as markup; no inline handlers or styles (the CSP forbids them).
import agentLogs from "./agent-logs.client.js";
import api from "./api.client.js";
import charts from "./charts.client.js";
import definition from "./definition.client.js";
import dialog from "./dialog.client.js";
import dom from "./dom.client.js";
import agentField from "./agent-field.client.js";
import fleet from "./fleet.client.js";
import format from "./format.client.js";
import incidents from "./incidents.client.js";
import job from "./job.client.js";
import jobOutput from "./job-output.client.js";
import jobs from "./jobs.client.js";
import main from "./main.client.js";
import notices from "./notices.client.js";
import poll from "./poll.client.js";
import runs from "./runs.client.js";
import session from "./session.client.js";
import usage from "./usage.client.js";
import { AGENT_NAME_PATTERN } from "../../config/agent-name.ts";
import { failedCallsWord } from "../../jobs/tool-call-words.ts";
import { csvOf } from "../../shared/csv.ts";
import { KeptAnswers } from "../../shared/kept-answers.ts";
import { noteVersionWeb } from "../../shared/note-version.ts";
import { retryAfterMs } from "../../shared/retry-after.ts";
import { SseParser } from "../../shared/sse.ts";
import { usd } from "../../shared/usd.ts";

const FILES = [dom, format, notices, api, dialog, poll, session, agentField, fleet, jobs, job, jobOutput, agentLogs, charts, runs, definition, usage, incidents, main];

// The SSE parser, the Retry-After reading and the kept answers the CLI (and the Worker) use, by their
// own source (built JavaScript, self-contained), rather than second ones written for the browser; so
// too the CSV writer, a notepad value's version, the agent name's pattern, the words for failed tool calls and a cost's.
const SHARED = `const SseParser = (${SseParser.toString()});\nconst retryAfterMs = (${retryAfterMs.toString()});\nconst KeptAnswers = (${KeptAnswers.toString()});\nconst csvOf = (${csvOf.toString()});\nconst noteVersionWeb = (${noteVersionWeb.toString()});\nconst AGENT_NAME_PATTERN = ${AGENT_NAME_PATTERN.toString()};\nconst failedCallsWord = (${failedCallsWord.toString()});\nconst usd = (${usd.toString()});\n`;

export const APP_JS = `"use strict";\n(() => {\n${SHARED}${FILES.join("\n")}})();\n`;
