/** @jsxImportSource hono/jsx */
// The dashboard's pages are shells: the frame, the headings, the filter forms and the empty tables.
// They hold no data (so they need no token); /ui/app.js signs in, calls the JSON API and fills them.
import type { Child } from "hono/jsx";
import { JOB_STATUSES, TRIGGER_TYPES } from "../jobs/schema.ts";
import { INCIDENT_STATE_FILTERS } from "../incidents/schema.ts";
import { printable } from "../shared/printable.ts";

export type View = "fleet" | "jobs" | "job" | "runs" | "logs" | "usage" | "incidents" | "missing";

export interface PageProps {
	view: View;
	title: string;
	/** Versioned asset URLs, so a deploy is picked up at once while the files cache for a year. */
	assets: { js: string; css: string; icon: string };
	/**
	 * The path parameter the view is about (a job id or an agent name), as sent: the page's script
	 * asks the API of it from data-subject (an attribute, never laid out as text). Shown in a heading
	 * through printable, as a bidi control in a crafted link would make it read reversed.
	 */
	subject?: string;
}

const NAV: { view: View; href: string; label: string }[] = [
	{ view: "fleet", href: "/", label: "Fleet" },
	{ view: "jobs", href: "/jobs", label: "Jobs" },
	{ view: "usage", href: "/usage", label: "Usage" },
	{ view: "incidents", href: "/incidents", label: "Incidents" },
];

function Layout(props: PageProps & { children: Child }) {
	// The job page belongs to Jobs in the navigation, an agent's runs and logs pages to the Fleet.
	const section = props.view === "job" ? "jobs" : props.view === "runs" || props.view === "logs" ? "fleet" : props.view;
	return (
		<html lang="en">
			<head>
				<meta charset="utf-8" />
				<meta name="viewport" content="width=device-width, initial-scale=1" />
				<title>{`${props.title} · drover`}</title>
				<link rel="icon" href={props.assets.icon} type="image/svg+xml" />
				<link rel="stylesheet" href={props.assets.css} />
				{/* The not-found page is static: it has nothing to sign in for or to load. */}
				{props.view === "missing" ? null : <script src={props.assets.js} defer></script>}
			</head>
			<body data-view={props.view} data-subject={props.subject ?? ""}>
				{/* The header's six stops (brand, sections, sign out) before every view's first control. */}
				<a class="skip" href="#main">
					Skip to content
				</a>
				<header class="topbar">
					<a class="brand" href="/">
						drover
					</a>
					{/* Shown once signed in (session.client.js): signed out, each link led back to the sign-in. */}
					<nav aria-label="Sections" hidden={props.view !== "missing"}>
						{NAV.map((n) => (
							<a href={n.href} aria-current={n.view === section ? "page" : undefined}>
								{n.label}
								{/* How many are open, from each read of GET /v1/status (session.client.js). */}
								{/* The number is for the eye; a screen reader hears the link's name as "Incidents (3 open)". */}
								{n.view === "incidents" ? (
									<>
										<span id="open-incidents" class="count" aria-hidden="true" hidden></span>
										<span id="open-incidents-said" class="sr-only"></span>
									</>
								) : null}
							</a>
						))}
					</nav>
					<div class="session">
						{/* A button: its warnings, in full, open beneath it (the title alone reaches no keyboard, touch or screen reader). */}
						<button type="button" id="scheduler-pill" class="pill" popovertarget="scheduler-details" hidden></button>
						<div id="scheduler-details" class="scheduler-details" popover="auto" role="group" aria-label="Scheduler"></div>
						{/* A change of the pill's state, said politely (session.client.js); the pill itself is redrawn at every poll. */}
						<span id="scheduler-said" class="sr-only" aria-live="polite"></span>
						{/* Who is signed in, and with which role (GET /v1/me): a read token's missing actions are its role's. */}
						<span id="whoami" class="whoami" hidden></span>
						<button type="button" id="sign-out" class="ghost" hidden>
							Sign out
						</button>
					</div>
				</header>
				<div id="notice" class="notice" role="alert" hidden></div>
				{/* Focusable by the skip link alone (tabindex -1), so that the next Tab is the view's first control. */}
				<main id="main" tabindex={-1}>
					{props.view === "missing" ? props.children : null}
					<section id="signin" class="signin" hidden>
						<h1>Sign in</h1>
						<p class="muted">Use an API token (read, operate or admin). It stays in this tab's session storage and is sent only as an Authorization header.</p>
						<form id="signin-form" autocomplete="off">
							<label for="token">API token</label>
							<input id="token" name="token" type="password" required spellcheck={false} autocomplete="off" />
							<button type="submit" class="primary">
								Sign in
							</button>
							<p id="signin-error" class="error" role="alert" hidden></p>
						</form>
					</section>
					<section id="view" hidden>
						{props.view === "missing" ? null : props.children}
					</section>
					<noscript>The dashboard needs JavaScript; the same data is available from the HTTP API.</noscript>
				</main>
			</body>
		</html>
	);
}

function Fleet() {
	return (
		<>
			<div class="view-head">
				<h1>Fleet</h1>
				<span id="fleet-meta" class="muted"></span>
				<button type="button" id="fleet-new" class="small" data-needs="admin">
					New agent
				</button>
				<span class="muted" data-only="read">
					Read-only token: actions need operate or admin.
				</span>
			</div>
			<section id="new-agent" class="panel" aria-label="New agent" hidden></section>
			{/* Asked of the API (prefix=): a fleet of thousands is shown 100 agents at a time. */}
			<form id="fleet-filter" class="filters" role="search">
				<label>
					Name starts with
					<input name="prefix" type="search" placeholder="any name" autocomplete="off" spellcheck={false} />
				</label>
			</form>
			<div class="table-wrap">
				<table class="grid" id="fleet-table">
					<thead>
						<tr>
							<th>Agent</th>
							<th>State</th>
							<th>Schedules · next run</th>
							<th>Running</th>
							<th>Last job</th>
							{/* A read token has no action here: the column goes, not just its buttons. */}
							<th class="actions" data-needs="operate">
								Actions
							</th>
						</tr>
					</thead>
					<tbody></tbody>
				</table>
			</div>
			<div class="pager">
				<button type="button" id="fleet-more" hidden>
					Next 100 agents
				</button>
				<button type="button" id="fleet-all" hidden>
					All agents
				</button>
			</div>
		</>
	);
}

function Options(props: { values: readonly string[]; all: string }) {
	return (
		<>
			<option value="">{props.all}</option>
			{props.values.map((v) => (
				<option value={v}>{v.replace(/_/g, " ")}</option>
			))}
		</>
	);
}

function Jobs() {
	return (
		<>
			<div class="view-head">
				<h1>Jobs</h1>
				{/* A status: a filter's or Older's count is said (a poll that changes nothing leaves it as it is). */}
				<span id="jobs-meta" class="muted" role="status"></span>
			</div>
			<form id="jobs-filter" class="filters">
				<AgentFilter list="jobs-agents" />
				<label>
					Status
					<select name="status">
						<Options values={JOB_STATUSES} all="any status" />
					</select>
				</label>
				<label>
					Trigger
					<select name="trigger_type">
						<Options values={TRIGGER_TYPES} all="any trigger" />
					</select>
				</label>
				{/* The viewer's time, its zone said beside the label (jobs.client.js); the address keeps UTC. */}
				<TimeFilter name="since" label="Created from" />
				<TimeFilter name="until" label="Created before" />
				{/* A filter the API refuses is said here, tied to its field (jobs.client.js). */}
				<p id="jobs-filter-error" class="error" role="alert" hidden></p>
			</form>
			<div class="table-wrap">
				<table class="grid" id="jobs-table">
					<thead>
						<tr>
							<th>Job</th>
							<th>Agent</th>
							<th>Status</th>
							<th>Trigger</th>
							<th>Started</th>
							<th class="num">Duration</th>
							<th>Summary</th>
						</tr>
					</thead>
					<tbody></tbody>
				</table>
			</div>
			<p id="jobs-empty" class="empty" hidden>
				No jobs match.
			</p>
			<div class="pager">
				<button type="button" id="jobs-older" hidden>
					Older
				</button>
			</div>
		</>
	);
}

function Job(props: { shown: string }) {
	return (
		<>
			<div class="view-head">
				<h1>
					<span class="mono">{props.shown}</span> <span id="job-status"></span>
				</h1>
				<div class="buttons" id="job-actions">
					<button type="button" id="job-download">
						Download JSONL
					</button>
					<button type="button" id="job-download-log" hidden>
						Download output.log
					</button>
					<button type="button" id="job-fork" data-needs="operate" hidden>
						Fork
					</button>
					<button type="button" id="job-continue" data-needs="operate" hidden>
						Continue
					</button>
					<span id="job-agent-gone" class="muted small" hidden>
						Its agent was deleted: it cannot be forked or continued.
					</span>
					<button type="button" id="job-cancel" class="danger" data-needs="operate" hidden>
						Cancel
					</button>
				</div>
			</div>
			{/* The badge in the heading changes in silence, and the log's state says only "ended": a change of
			    the job's status while the page is open is said here (job.client.js), politely. */}
			<p id="job-status-said" class="sr-only" aria-live="polite"></p>
			<section id="job-approval" class="panel approval" hidden>
				<h2>Waiting for approval</h2>
				<p>
					The model wants to call <strong id="approval-tool" class="mono"></strong>
					<span id="approval-requested" class="muted"></span>.<span data-needs="operate"> Edit the input if needed, then decide.</span>
					<span data-lacks="operate"> Deciding takes an operate or admin token.</span>
				</p>
				<div data-needs="operate">
					<label for="approval-input">Tool input (JSON)</label>
					<textarea id="approval-input" rows={6} spellcheck={false}></textarea>
					{/* An alert, tied to the input while shown (job.client.js): said even as the focus stays on Approve. */}
					<p id="approval-error" class="error" role="alert" hidden></p>
					<div class="buttons">
						<button type="button" id="approval-approve" class="primary" data-needs="operate">
							Approve
						</button>
						<button type="button" id="approval-deny" class="danger" data-needs="operate">
							Deny
						</button>
					</div>
				</div>
				{/* A read token cannot decide: an editable box would offer an edit nothing can send. */}
				<div data-lacks="operate">
					<h3>Tool input (JSON)</h3>
					<pre id="approval-input-text" class="text"></pre>
				</div>
			</section>
			<div class="columns">
				<section class="panel">
					<h2>Record</h2>
					<dl id="job-facts" class="facts"></dl>
					<h3>Prompt</h3>
					<pre id="job-prompt" class="text"></pre>
					<h3>Summary</h3>
					<pre id="job-summary" class="text"></pre>
					<details id="job-manifest">
						<summary>What it runs with</summary>
						<div id="job-manifest-body">
							<p class="muted">Loading…</p>
						</div>
					</details>
				</section>
				<div>
					<section class="panel">
						<h2>Usage</h2>
						<div class="table-wrap">
							<table class="grid compact" id="job-usage">
								<thead>
									<tr>
										<th>Model</th>
										<th class="num">Input</th>
										<th class="num">Output</th>
										<th class="num">Cache write</th>
										<th class="num">Cache read</th>
									</tr>
								</thead>
								<tbody></tbody>
							</table>
						</div>
						<p id="job-usage-meta" class="muted"></p>
					</section>
					<section class="panel">
						<h2>Delivery</h2>
						<p id="job-delivery"></p>
						{/* Its hook calls (after_run, on_error), from GET /v1/jobs/:id's hooks (job.client.js); hidden while there are none. */}
						<div id="job-hooks" hidden></div>
					</section>
					<section class="panel">
						<h2>Transitions</h2>
						<ol id="job-transitions" class="timeline"></ol>
					</section>
				</div>
			</div>
			<section class="panel">
				<details id="job-tool-calls">
					<summary>Tool calls</summary>
					<div id="job-tool-calls-body">
						<p class="muted">Loading…</p>
					</div>
				</details>
			</section>
			<section class="panel">
				<div class="panel-head">
					<h2>
						Output <span id="log-zone" class="muted small"></span>
					</h2>
					<span id="log-state" class="pill" role="status"></span>
				</div>
				{/* The log itself is not live (opening a job would read out every stored line): lines written
				    while the page is open are announced here instead. */}
				<p id="log-announce" class="sr-only" aria-live="polite"></p>
				<p id="log-earlier" class="muted small log-earlier" hidden>
					<span id="log-earlier-text"></span>{" "}
					<button type="button" id="log-earlier-read" class="small" aria-controls="log-history">
						Read earlier lines
					</button>{" "}
					<button type="button" id="log-earlier-download" class="small">
						Download JSONL
					</button>
				</p>
				{/* The lines the live log does not keep, a page at a time, read by number from the output. */}
				<section id="log-history" class="log-history" aria-labelledby="log-history-title" hidden>
					<div class="panel-head">
						<h3 id="log-history-title">Earlier lines</h3>
						<span id="log-history-range" class="muted small" role="status"></span>
					</div>
					<form id="log-history-nav" class="log-history-nav">
						<button type="button" id="log-history-earlier" class="small">
							Earlier
						</button>
						<button type="button" id="log-history-later" class="small">
							Later
						</button>
						<label for="log-history-from">From line</label>
						<input id="log-history-from" type="number" min="1" step="1" inputmode="numeric" />
						<button type="submit" class="small">
							Go
						</button>
						<button type="button" id="log-history-close" class="small">
							Close
						</button>
					</form>
					<ol id="log-history-lines" class="log" aria-label="Earlier output"></ol>
				</section>
				<ol id="job-log" class="log" aria-label="Output"></ol>
			</section>
		</>
	);
}

/**
 * The run classes, as the runs chart draws them: each its colour and its own shape, so that they are
 * told apart without colour (failed and on time were 1.31:1 apart). `shape` is an SVG path around
 * 0,0; runs.client.js draws its marks from the same paths (RUN_SHAPES), the legend from these.
 * Skipped and unknown are drawn hollow (styles.ts).
 */
export const RUN_CLASSES: { key: string; label: string; shape: string }[] = [
	{ key: "on-time", label: "on time", shape: "M-7,0A7,7 0 1,0 7,0A7,7 0 1,0 -7,0Z" },
	{ key: "late", label: "late", shape: "M0,-8L8,6L-8,6Z" },
	{ key: "catch-up", label: "catch-up", shape: "M0,-8L8,0L0,8L-8,0Z" },
	{ key: "manual", label: "manual / webhook", shape: "M-6,-6H6V6H-6Z" },
	{ key: "skipped", label: "skipped", shape: "M-6,0A6,6 0 1,0 6,0A6,6 0 1,0 -6,0Z" },
	{ key: "unknown", label: "unknown", shape: "M-5.5,-5.5H5.5V5.5H-5.5Z" },
	{ key: "failed", label: "failed", shape: "M3.8,-7.5L7.5,-3.8L3.7,0L7.5,3.8L3.8,7.5L0,3.7L-3.8,7.5L-7.5,3.8L-3.7,0L-7.5,-3.8L-3.8,-7.5L0,-3.7Z" },
];

function Runs(props: { agent: string; shown: string }) {
	return (
		<>
			<div class="view-head">
				<h1>
					Runs · <span>{props.shown}</span>
				</h1>
				<span id="runs-meta" class="muted"></span>
				<a href={`/agents/${encodeURIComponent(props.agent)}/logs`}>Logs</a>
				<a href={`/usage?agent=${encodeURIComponent(props.agent)}`}>Usage</a>
			</div>
			<section id="persistent-session" class="panel session-panel" aria-label="Persistent session" hidden>
				<p id="persistent-session-text"></p>
				<button type="button" id="persistent-session-reset" class="small" data-needs="operate" hidden>
					Forget session
				</button>
			</section>
			{/* Read at each opening: both change without a run (an apply, a deploy, a notepad write). */}
			<section class="panel agent-about">
				<details id="agent-definition">
					<summary>Definition</summary>
					<div id="agent-definition-body">
						<p class="muted">Loading…</p>
					</div>
				</details>
				<details id="agent-notepad">
					<summary>Notepad</summary>
					<div id="agent-notepad-body">
						<p class="muted">Loading…</p>
					</div>
				</details>
			</section>
			<section class="panel">
				<div id="runs-chart" class="chart"></div>
				<ul class="legend">
					{RUN_CLASSES.map((c) => (
						<li>
							<svg class="legend-mark" viewBox="-9 -9 18 18" aria-hidden="true">
								<path class={`mark run-${c.key}`} d={c.shape} />
							</svg>
							{c.label}
						</li>
					))}
				</ul>
			</section>
			<div class="table-wrap">
				<table class="grid" id="runs-table">
					<thead>
						<tr>
							<th>Slot</th>
							<th>Schedule</th>
							<th>Dispatch</th>
							<th>Status</th>
							<th>Claimed</th>
							<th>Job</th>
							<th>Delivery</th>
							<th>Note</th>
						</tr>
					</thead>
					<tbody></tbody>
				</table>
			</div>
			<p id="runs-empty" class="empty" hidden>
				No occurrences yet: the ledger fills as the scheduler ticks.
			</p>
		</>
	);
}

/** An agent filter's field (the jobs list's, usage's, incidents'), its suggestions (every agent's name) in the datalist `list` (client: agentField). */
function AgentFilter(props: { list: string }) {
	return (
		<label>
			Agent
			<input name="agent" list={props.list} placeholder="all agents" autocomplete="off" spellcheck={false} />
			<datalist id={props.list}></datalist>
		</label>
	);
}

/** A time filter's field, to the second, its zone said beside the label (jobs.client.js). */
function TimeFilter(props: { name: string; label: string }) {
	return (
		<label>
			<span>
				{props.label} <span class="filter-zone"></span>
			</span>
			<input type="datetime-local" name={props.name} step="1" />
		</label>
	);
}

/** The usage page's periods, in days back from today (UTC): the first is shown by default, `?days=` picks another. */
const USAGE_PERIODS = [7, 30, 90];

function Usage() {
	return (
		<>
			<div class="view-head">
				<h1>Usage</h1>
				<span id="usage-meta" class="muted"></span>
			</div>
			<form id="usage-filter" class="filters">
				<AgentFilter list="usage-agents" />
				<label>
					Period
					<select id="usage-days" name="days">
						{USAGE_PERIODS.map((d) => (
							<option value={String(d)}>Last {d} days</option>
						))}
					</select>
				</label>
				{/* A filter the API refuses is said here, tied to its field (usage.client.js). */}
				<p id="usage-filter-error" class="error" role="alert" hidden></p>
			</form>
			<section class="panel">
				<h2>Tokens per agent per day</h2>
				<div id="usage-chart" class="chart"></div>
				<ul id="usage-legend" class="legend"></ul>
			</section>
			<div class="table-wrap">
				<table class="grid" id="usage-table">
					<thead>
						<tr>
							<th>Day (UTC)</th>
							<th>Agent</th>
							<th class="num">Jobs</th>
							<th class="num">Input</th>
							<th class="num">Output</th>
							<th class="num">Cache write</th>
							<th class="num">Cache read</th>
							<th class="num">Cost</th>
						</tr>
					</thead>
					<tbody></tbody>
				</table>
			</div>
			<div class="pager">
				<span id="usage-rows" class="muted"></span>
				<button type="button" id="usage-more" hidden>
					Next 200 rows
				</button>
				<button type="button" id="usage-all" hidden>
					All rows
				</button>
				<button type="button" id="usage-csv">
					Download CSV
				</button>
			</div>
		</>
	);
}

function Incidents() {
	return (
		<>
			<div class="view-head">
				<h1>Incidents</h1>
				<span id="incidents-meta" class="muted" role="status"></span>
			</div>
			<form id="incidents-filter" class="filters">
				<AgentFilter list="incidents-agents" />
				<label>
					State
					<select name="state">
						<Options values={INCIDENT_STATE_FILTERS} all="any state" />
					</select>
				</label>
				{/* A filter the API refuses is said here, tied to its field (incidents.client.js). */}
				<p id="incidents-filter-error" class="error" role="alert" hidden></p>
			</form>
			<div class="table-wrap">
				<table class="grid" id="incidents-table">
					<thead>
						<tr>
							<th>Incident</th>
							<th>Agent</th>
							<th>Class</th>
							<th>State</th>
							<th>Error</th>
							<th class="num">Count</th>
							<th>Last seen</th>
							<th>Last job</th>
							{/* Its cells hold Close buttons: a column header a screen reader has a name for. */}
							<th class="actions">
								<span class="sr-only">Actions</span>
							</th>
						</tr>
					</thead>
					<tbody></tbody>
				</table>
			</div>
			<p id="incidents-empty" class="empty" hidden>
				No incidents.
			</p>
			<div class="pager">
				<button type="button" id="incidents-older" hidden>
					Older
				</button>
			</div>
		</>
	);
}

/** An agent's logs: a section per job, the newest at the bottom, filled and followed by /ui/app.js. */
function AgentLogs(props: { agent: string; shown: string }) {
	return (
		<>
			<div class="view-head">
				<h1>
					Logs · <span>{props.shown}</span>
				</h1>
				<span id="agent-logs-meta" class="muted"></span>
				<a href={`/agents/${encodeURIComponent(props.agent)}/runs`}>Runs</a>
			</div>
			{/* Its jobs starting and ending, said politely; their lines are not (a busy agent's would never stop). */}
			<p id="agent-logs-announce" class="sr-only" aria-live="polite"></p>
			<div id="agent-logs"></div>
			<p id="agent-logs-empty" class="empty" hidden>
				No output yet: jobs appear here as they start.
			</p>
		</>
	);
}

/** The page for a view: the shared frame around that view's skeleton. */
/** A browser's address that is no page: said as a page, with the way back, not as the API's JSON. */
function Missing(props: { path: string }) {
	return (
		<section class="missing">
			<h1>Page not found</h1>
			<p>
				The dashboard has no page at <code>{props.path}</code>.
			</p>
			<p>
				<a href="/">Fleet</a> · <a href="/jobs">Jobs</a> · <a href="/usage">Usage</a> · <a href="/incidents">Incidents</a>
			</p>
		</section>
	);
}

export function Page(props: PageProps) {
	const subject = props.subject ?? "";
	const shown = printable(subject);
	const body = (() => {
		switch (props.view) {
			case "fleet":
				return <Fleet />;
			case "jobs":
				return <Jobs />;
			case "job":
				return <Job shown={shown} />;
			case "runs":
				return <Runs agent={subject} shown={shown} />;
			case "logs":
				return <AgentLogs agent={subject} shown={shown} />;
			case "usage":
				return <Usage />;
			case "incidents":
				return <Incidents />;
			case "missing":
				return <Missing path={shown} />;
		}
	})();
	return <Layout {...props}>{body}</Layout>;
}
