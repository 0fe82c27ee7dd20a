import { createHash } from "node:crypto";
import { inflateSync } from "node:zlib";
import { mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import vm from "node:vm";
import { chromium, type Browser, type BrowserContext, type Page, type Request, type Route } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { backlogWarning } from "../../src/scheduler/backlog.ts";

// The dashboard, driven in Debian's Chromium against the local Worker (the real bundle in workerd)
// and the Messages API emulator. Nothing here sleeps: every wait is on something the page or the
// API shows.

const { url, emulatorUrl, tokens } = inject("drover");
const SHOTS = path.join(import.meta.dirname, "screenshots");
const LIVE = { timeout: 20_000 };
const run = Math.random().toString(36).slice(2, 8);

interface JobRecord {
	id: string;
	status: string;
	agent: string;
	created_at: string;
	pending_approval: { tool_use_id: string; tool_name: string; input: Record<string, unknown>; expires_at?: string } | null;
	error: { type: string; message: string } | null;
}

async function call<T>(method: string, pathname: string, token: string | null, body?: unknown): Promise<T> {
	const headers: Record<string, string> = {};
	if (token) headers.authorization = `Bearer ${token}`;
	if (body !== undefined) headers["content-type"] = "application/json";
	const res = await fetch(`${url}${pathname}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
	const text = await res.text();
	if (!res.ok) throw new Error(`${method} ${pathname} answered ${res.status}: ${text}`);
	return (text ? JSON.parse(text) : null) as T;
}

/** Queues model answers on the emulator; each model request takes the next one. */
async function script(...steps: unknown[]): Promise<void> {
	const res = await fetch(`${emulatorUrl}/__emulator/script`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(steps) });
	expect(res.status).toBe(200);
}

async function emulatorQueued(): Promise<number> {
	const res = await fetch(`${emulatorUrl}/__emulator/script`, { method: "POST", headers: { "content-type": "application/json" }, body: "[]" });
	return ((await res.json()) as { queued: number }).queued;
}

async function createAgent(name: string, definition: Record<string, unknown>): Promise<string> {
	await call("POST", "/v1/agents", tokens.admin, { name, prompt: "Do the thing.", timeout: "5m", ...definition });
	return name;
}

/** A tool that needs approval. */
const TICKET_TOOL = {
	type: "webhook",
	name: "create_ticket",
	description: "File a ticket.",
	// The e2e Worker's one tool target (global-setup); the call's answer (a 404) does not matter here.
	url_secret: "E2E_TICKETS_URL",
	requires_approval: true,
	input_schema: { type: "object", properties: { title: { type: "string" } } },
};

const trigger = (agent: string, prompt?: string) =>
	call<JobRecord>("POST", `/v1/agents/${agent}/jobs`, tokens.operate, prompt === undefined ? {} : { prompt });
const getJob = (id: string) => call<JobRecord>("GET", `/v1/jobs/${id}`, tokens.read);
const FINAL = ["completed", "failed", "cancelled", "indeterminate"];

async function settled(id: string): Promise<string> {
	await expect.poll(async () => (await getJob(id)).status, LIVE).toSatisfy((s: string) => FINAL.includes(s));
	return (await getJob(id)).status;
}

/**
 * A job of a new agent (named `name`, with TICKET_TOOL and `definition`) whose create_ticket call
 * waits for a person's decision; the model answers `then` once it is decided. `prompt` null: the
 * run is asked without one (the agent's own).
 */
async function awaitingApproval(name: string, then: { text: string }, definition: Record<string, unknown> = {}, prompt: string | null = "File it.") {
	const agent = await createAgent(name, { tools: [TICKET_TOOL], ...definition });
	await script({ tool_use: { name: "create_ticket", input: { title: "Disk full" } } }, then);
	const job = await trigger(agent, prompt ?? undefined);
	await expect.poll(async () => (await getJob(job.id)).status, LIVE).toBe("approval_pending");
	return { agent, job };
}

/** One scheduler tick at `at` (ms), as Cloudflare's cron would fire it. */
async function tick(at: number): Promise<void> {
	const res = await fetch(`${url}/cdn-cgi/local/scheduled?cron=*+*+*+*+*&time=${at}`);
	expect(res.status).toBe(200);
	await res.text();
}

/** A new agent `name` and a job of it that ended completed, listed by the API's job list. */
async function completedJob(name: string): Promise<{ agent: string; job: JobRecord }> {
	const agent = await createAgent(name, {});
	await script({ text: "Done." });
	const job = await trigger(agent, "Go.");
	expect(await settled(job.id)).toBe("completed");
	const listed = async () => (await call<{ jobs: { id: string }[] }>("GET", `/v1/jobs?agent=${agent}`, tokens.read)).jobs.map((j) => j.id);
	await expect.poll(listed, LIVE).toEqual([job.id]);
	return { agent, job };
}

/**
 * An hour well before the half hour the runs tests tick in (30 to 60 minutes ago), the same for every
 * test of the file: scheduledRuns ticks at its minutes 2 and 5, not after the cursor of any agent an
 * earlier test ticked (so they claim nothing of theirs), and between fleet.yaml's slots (every 15
 * minutes, or on the hour), so only the new agent's jobs call the model.
 */
const RUNS_HOUR = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 2 * 3_600_000;

/**
 * A new agent `name` with an every-minute schedule (catch_up off) and the runs of two ticks three
 * minutes apart: on time, the two slots between skipped (superseded), on time; both jobs ended.
 */
async function scheduledRuns(name: string): Promise<string> {
	expect(await emulatorQueued()).toBe(0);
	const agent = await createAgent(name, { schedules: { "every-minute": { interval: "1m", catch_up: false } } });
	const jobsOf = async () => (await call<{ jobs: JobRecord[] }>("GET", `/v1/jobs?agent=${agent}&limit=50`, tokens.read)).jobs;
	for (const [minute, jobs] of [[2, 1], [5, 2]] as const) {
		await tick(RUNS_HOUR + minute * 60_000);
		await expect.poll(async () => (await jobsOf()).map((j) => j.status), LIVE).toSatisfy((s: string[]) => s.length === jobs && s.every((x) => FINAL.includes(x)));
	}
	return agent;
}

/**
 * `count` made-up incidents of agents fleet-0000…, as the API lists them; their ids are `prefix`_ and
 * the index in hex. The i-th was seen `ago(i)` ms before `now`: by default newest first, a minute apart.
 */
function madeUpIncidents(count: number, prefix: string, now: number, ago = (i: number) => (i + 1) * 60_000) {
	return Array.from({ length: count }, (_, i) => ({
		id: `${prefix}_${i.toString(16).padStart(12, "0")}`,
		agent: `fleet-${String(i).padStart(4, "0")}`,
		signature: `sig-${i}`,
		class: "agent",
		state: "detected",
		error: `error number ${i}`,
		count: 1,
		first_seen_at: new Date(now - ago(i)).toISOString(),
		last_seen_at: new Date(now - ago(i)).toISOString(),
		last_job_id: null,
		alerted_at: null,
		resolved_at: null,
		closed_at: null,
		closed_by: null,
		failing: null,
	}));
}

let browser: Browser;
let context: BrowserContext;
/** Everything the pages reported as broken: a CSP violation or a script error fails the suite. */
const pageErrors: string[] = [];

/**
 * A page in a browser context of its own, closed with it. A context's clock is every page's in it: one
 * installed, moved or held on the shared context was every later test's (a usage test's held clock
 * made a later "just now" read "in 10 seconds" when the two ran without the tests between them).
 */
async function pageOfItsOwn(): Promise<Page> {
	const own = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
	// Closed with the shared one, after the suite: closed with its page, a route handler still reading
	// an answer (fetchWhole) met "Response has been disposed" after its test had ended.
	ownContexts.push(own);
	return own.newPage();
}
/** The contexts pageOfItsOwn made, closed after the suite. */
const ownContexts: BrowserContext[] = [];

type OpenOptions = {
	/** The page's timers run only when the test moves its clock (page.clock.runFor). */
	fakeClock?: boolean;
	/** A context of its own, for a test that sets its clock otherwise (setFixedTime). */
	ownClock?: boolean;
};

async function open(pathname: string, opts: OpenOptions = {}): Promise<Page> {
	const page = opts.fakeClock || opts.ownClock ? await pageOfItsOwn() : await context.newPage();
	if (opts.fakeClock) await page.clock.install();
	page.on("pageerror", (err) => pageErrors.push(`${pathname}: ${err.message}`));
	page.on("console", (msg) => {
		if (msg.type() === "error" && /Content Security Policy|Refused to/i.test(msg.text())) pageErrors.push(`${pathname}: ${msg.text()}`);
	});
	// Every action asks in the page's own dialog: a native prompt() or confirm() is a failure.
	page.on("dialog", (d) => {
		pageErrors.push(`${pathname}: a native ${d.type()} dialog: ${d.message()}`);
		void d.dismiss();
	});
	await page.goto(`${url}${pathname}`);
	return page;
}

/**
 * Waits until the view's first load is drawn and its polls are set (#view loses aria-busy): a page's
 * clock moved before then moves past no poll, which would come only as real time passes.
 */
async function viewReady(page: Page): Promise<void> {
	await page.locator("#view:not([aria-busy])").waitFor(LIVE);
}

/**
 * Moves the page's fake clock `ms` once its view's next poll is timed (`#view[data-poll=set]`): a
 * poll times the next only when its loads have answered, so a clock moved while they are under way
 * passes no timer, and the poll came `ms` later in real time.
 */
async function stepClock(page: Page, ms: number): Promise<void> {
	await page.locator('#view[data-poll="set"]').waitFor(LIVE);
	await page.clock.runFor(ms);
}

/** The accessible description Chromium computes for the element `selector` finds (what a screen reader says after its name). */
async function accessibleDescription(page: Page, selector: string): Promise<string | null> {
	const cdp = await page.context().newCDPSession(page);
	try {
		const { root } = await cdp.send("DOM.getDocument", { depth: 0 });
		const { nodeId } = await cdp.send("DOM.querySelector", { nodeId: root.nodeId, selector });
		const { nodes } = await cdp.send("Accessibility.getPartialAXTree", { nodeId, fetchRelatives: false });
		const value = nodes[0]?.description?.value;
		return typeof value === "string" ? value : null;
	} finally {
		await cdp.detach();
	}
}

/** Signs in on a page already open (one whose requests the test routes first), at `pathname`. */
async function signInOn(page: Page, pathname: string, token: string): Promise<void> {
	await page.goto(`${url}${pathname}`);
	await page.locator("#token").fill(token);
	await page.locator("#signin-form button[type=submit]").click();
}

/** Opens a page and signs in on it (the token is per tab: sessionStorage). */
async function signedIn(pathname: string, token: string = tokens.operate, opts: OpenOptions = {}): Promise<Page> {
	const page = await open(pathname, opts);
	await page.locator("#token").fill(token);
	await page.locator("#signin-form button[type=submit]").click();
	await page.locator("#view").waitFor({ state: "visible" });
	return page;
}

interface FakeAgent {
	name: string;
	paused: { by: string; at: string; reason: string } | null;
	[k: string]: unknown;
}

/**
 * A made-up fleet of `size` agents (fleet-0000… and, last by name, an auto-paused `triage`), served
 * as GET /v1/agents pages it (limit, cursor by name) with GET /v1/status counting it; each agent is a
 * real one's record renamed. `requests` records every /v1/agents request, `served` the bytes answered;
 * `hold()` keeps the next one unanswered until its `release()`.
 */
async function fakeFleet(page: Page, size: number) {
	const { agents: [real] } = await call<{ agents: FakeAgent[] }>("GET", "/v1/agents?limit=1", tokens.read);
	const at = new Date().toISOString();
	const agents: FakeAgent[] = Array.from({ length: size }, (_, i) => ({
		...real!,
		name: i === size - 1 ? "triage" : `fleet-${String(i).padStart(4, "0")}`,
		enabled: true,
		schedules: [],
		running_jobs: [],
		queued_jobs: 0,
		last_job: null,
		paused: i === size - 1 || i % 180 === 7 ? { by: "auto", at, reason: "auto: secret TOKEN is not set" } : null,
	}));
	const requests: URL[] = [];
	/** The bytes of JSON the fake answered /v1/agents with, and how many answers were 304s (bodiless). */
	const served = { bytes: 0, unchanged: 0 };
	let holdNext: ((release: () => Promise<void>) => void) | null = null;
	await page.route(
		(u) => u.pathname === "/v1/agents",
		async (route) => {
			const u = new URL(route.request().url());
			requests.push(u);
			const limit = Number(u.searchParams.get("limit") ?? 50);
			const cursor = u.searchParams.get("cursor");
			// As the API answers prefix=: only the names starting with it.
			const named = agents.filter((a) => a.name.startsWith(u.searchParams.get("prefix") ?? ""));
			const from = cursor === null ? 0 : named.filter((a) => a.name <= cursor).length;
			const slice = named.slice(from, from + limit);
			// As the API answers view=names: each agent's name and source alone.
			const listed = u.searchParams.get("view") === "names" ? slice.map((a) => ({ name: a.name, source: a.source })) : slice;
			const body = JSON.stringify({ agents: listed, next_cursor: from + limit < named.length ? slice.at(-1)!.name : null });
			// As the API revalidates (src/api/conditional-get.ts): an unchanged answer's tag is a 304.
			const etag = `"${createHash("sha1").update(body).digest("base64url")}"`;
			const unchanged = route.request().headers()["if-none-match"] === etag;
			if (unchanged) served.unchanged++;
			else served.bytes += body.length;
			const answer = () => (unchanged ? route.fulfill({ status: 304, headers: { etag } }) : route.fulfill({ contentType: "application/json", headers: { etag }, body }));
			if (!holdNext) return answer();
			const held = holdNext;
			holdNext = null;
			held(answer);
		},
	);
	await page.route(
		(u) => u.pathname === "/v1/status",
		async (route) => {
			const body = (await (await fetchWhole(route)).json()) as Record<string, unknown>;
			return route.fulfill({ json: { ...body, agents: { file: 16, api: size - 16 } } });
		},
	);
	const hold = () => new Promise<() => Promise<void>>((resolve) => (holdNext = resolve));
	return { agents, requests, served, hold };
}

interface UsageRow {
	day: string;
	agent: string;
	jobs: number;
	input_tokens: number;
	output_tokens: number;
	cache_creation_input_tokens: number;
	cache_read_input_tokens: number;
	cost_usd: number | null;
	priced_jobs: number;
}

const USAGE_SUMS = ["jobs", "input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "priced_jobs"] as const;
const usageTokens = (r: UsageRow) => r.input_tokens + r.output_tokens + r.cache_creation_input_tokens + r.cache_read_input_tokens;

/** `rows` summed by `key` as the index sums them: no cost where none of them has one, to a millionth of a dollar. */
function sumUsage<K extends "day" | "agent">(rows: UsageRow[], key: K) {
	const groups = new Map<string, Record<string, number | string | null>>();
	for (const r of rows) {
		const count = key === "day" ? "agents" : "days";
		const t = groups.get(r[key]) ?? { [key]: r[key], [count]: 0, jobs: 0, input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, cost_usd: null, priced_jobs: 0 };
		for (const k of USAGE_SUMS) t[k] = (t[k] as number) + r[k];
		t[count] = (t[count] as number) + 1;
		if (r.cost_usd !== null) t.cost_usd = Math.round(((t.cost_usd as number | null) ?? 0) * 1e6 + r.cost_usd * 1e6) / 1e6;
		groups.set(r[key], t);
	}
	return [...groups.values()];
}

/**
 * GET /v1/usage answered from `rows` as the index answers it: the days from `since` to `until`, `agent` one name or several, pages of
 * `limit` rows (the cursor an offset) newest day first and by agent; group=day each day's rows summed;
 * group=agent each agent's, busiest by tokens first, with the count of them. Returns the requests made
 * and the bytes of JSON answered.
 */
async function fakeUsage(page: Page, rows: UsageRow[]) {
	const ordered = [...rows].sort((a, b) => (a.day === b.day ? (a.agent < b.agent ? -1 : 1) : a.day < b.day ? 1 : -1));
	const served = { requests: [] as URL[], bytes: 0 };
	await page.route(
		(u) => u.pathname === "/v1/usage",
		(route) => {
			const u = new URL(route.request().url());
			served.requests.push(u);
			const names = u.searchParams.get("agent")?.split(",");
			const since = u.searchParams.get("since") ?? "0000-00-00";
			const until = u.searchParams.get("until") ?? "9999-99-99";
			const mine = ordered.filter((r) => (!names || names.includes(r.agent)) && r.day >= since && r.day <= until);
			const from = Number(u.searchParams.get("cursor") ?? 0);
			const limit = Number(u.searchParams.get("limit") ?? 500);
			const paged = <T>(list: T[]) => ({ page: list.slice(from, from + limit), next_cursor: from + limit < list.length ? String(from + limit) : null });
			let json: unknown;
			if (u.searchParams.get("group") === "day") {
				const { page, next_cursor } = paged(sumUsage(mine, "day"));
				json = { days: page, next_cursor };
			} else if (u.searchParams.get("group") === "agent") {
				const tokensOf = (a: Record<string, unknown>) => mine.filter((r) => r.agent === a.agent).reduce((n, r) => n + usageTokens(r), 0);
				const agents = sumUsage(mine, "agent").sort((a, b) => tokensOf(b) - tokensOf(a) || ((a.agent as string) < (b.agent as string) ? -1 : 1));
				const { page, next_cursor } = paged(agents);
				json = { agents: page, total: agents.length, next_cursor };
			} else {
				const { page, next_cursor } = paged(mine);
				json = { days: page, next_cursor };
			}
			const body = JSON.stringify(json);
			served.bytes += body.length;
			return route.fulfill({ contentType: "application/json", body });
		},
	);
	return served;
}

/**
 * Counts the timers the page sets for `ms` from now on: a poll sets its next one when its load has
 * finished, so a test can wait for that before moving the fake clock. (A string: no DOM types here.)
 */
async function watchTimers(page: Page, ms: number): Promise<() => Promise<number>> {
	await page.evaluate(`(() => {
		window.timersSet = 0;
		const set = window.setTimeout;
		window.setTimeout = function (fn, delay, ...rest) {
			if (delay === ${ms}) window.timersSet++;
			return set.call(window, fn, delay, ...rest);
		};
	})()`);
	return () => page.evaluate<number>("window.timersSet");
}

/**
 * The real fleet's first load drawn (any agent's row): it lists 100 agents by name, and the agents
 * the e2e files create come before fleet.yaml's triage, so a wait for triage's row would depend on
 * how many there are by then.
 */
const fleetShown = (page: Page) => page.locator("#fleet-table tbody tr[data-agent]").first().waitFor(LIVE);

const shot = (page: Page, view: string) => page.screenshot({ path: path.join(SHOTS, `${view}.png`), fullPage: true });

/**
 * A routed GET's answer fetched from the Worker whole: the page sends the ETag of the answer it kept
 * (api.client.js), and a 304 would carry no JSON for the test to read or change.
 */
function fetchWhole(route: Route) {
	const { "if-none-match": _kept, ...headers } = route.request().headers();
	return route.fetch({ headers });
}

/**
 * Holds the answer to the first GET whose URL `matches`: it is fetched at once, so it shows the state
 * of that moment, and `read` sums its JSON up for the test; it reaches the page only at `release()`,
 * which resolves once the page has received it. Later matching requests go through.
 */
async function holdFirst<T>(page: Page, matches: (u: URL) => boolean, read: (body: never) => T): Promise<{ held: Promise<{ value: T; release: () => Promise<void> }> }> {
	let holding = false;
	let found!: (held: { value: T; release: () => Promise<void> }) => void;
	const held = new Promise<{ value: T; release: () => Promise<void> }>((resolve) => (found = resolve));
	// Registered before the caller acts, so the request its action sets off is the one held.
	await page.route(matches, async (route) => {
		if (holding || route.request().method() !== "GET") return route.continue();
		holding = true;
		const response = await fetchWhole(route);
		const value = read((await response.json()) as never);
		const request = route.request();
		found({
			value,
			release: async () => {
				const finished = page.waitForEvent("requestfinished", (r) => r === request);
				await route.fulfill({ response });
				await finished;
			},
		});
	});
	// Wrapped: an async function would adopt the promise and wait for the request itself.
	return { held };
}

beforeAll(async () => {
	mkdirSync(SHOTS, { recursive: true });
	// No network on this machine (or in CI): keep Chromium from reaching for it.
	browser = await chromium.launch({
		executablePath: "/usr/bin/chromium",
		args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
	});
	context = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
});

afterAll(async () => {
	for (const own of ownContexts) await own.close();
	await context?.close();
	await browser?.close();
});

describe("the dashboard", () => {
	it("serves shells with a strict CSP and its assets with cache headers, and leaves the API's routes alone", async () => {
		for (const p of ["/", "/jobs", "/jobs/job-2026-01-01-abcdef", "/agents/triage/runs", "/usage", "/incidents"]) {
			const res = await fetch(`${url}${p}`);
			expect(res.status, p).toBe(200);
			expect(res.headers.get("content-type")).toMatch(/text\/html/);
			const csp = res.headers.get("content-security-policy") ?? "";
			expect(csp).toContain("script-src 'self'");
			expect(csp).toContain("style-src 'self'");
			expect(csp).toContain("frame-ancestors 'none'");
			expect(res.headers.get("x-content-type-options")).toBe("nosniff");
			expect(res.headers.get("referrer-policy")).toBe("no-referrer");
			const html = await res.text();
			// No inline script or style: everything comes from /ui/.
			expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
			expect(html).not.toMatch(/<style|\sstyle=/);
		}
		// A path parameter is echoed into the shell (title, data attribute) only escaped.
		const hostile = await (await fetch(`${url}/agents/${encodeURIComponent('"><img src=x onerror=alert(1)>')}/runs`)).text();
		expect(hostile).not.toContain("<img");
		expect(hostile).toContain("&lt;img");
		const page = await (await fetch(`${url}/`)).text();
		const js = /src="(\/ui\/app\.js\?v=[0-9a-f]+)"/.exec(page)?.[1];
		expect(js).toBeDefined();
		const asset = await fetch(`${url}${js}`);
		expect(asset.headers.get("content-type")).toMatch(/javascript/);
		expect(asset.headers.get("cache-control")).toContain("immutable");
		// The script is a string in the Worker, so nothing compiles it before a browser does: a syntax
		// error would only show as every page failing to load. Compiled here (not run) to say so first.
		const source = await asset.text();
		expect(() => new vm.Script(source, { filename: "app.js" })).not.toThrow();
		expect((await fetch(`${url}/ui/app.css`)).headers.get("cache-control")).toBe("no-cache");
		// The API's own answers are untouched.
		expect((await fetch(`${url}/v1/jobs`)).status).toBe(401);
		expect((await fetch(`${url}/openapi.json`)).headers.get("content-type")).toMatch(/json/);
		expect([200, 503]).toContain((await fetch(`${url}/healthz`)).status);
		const unknown = await fetch(`${url}/nothing-here`);
		expect(unknown.status).toBe(404);
		expect(unknown.headers.get("content-type")).toMatch(/json/);
	});

	it("asks the API of a crafted link's agent name as sent, and shows it and the API's answer escaped", async () => {
		const page = await signedIn("/agents/%E2%80%AEgnp.exe/runs", tokens.read);
		// The API names the character itself: the page had asked it of "\\u202egnp.exe", and its 400 named "\\".
		const notice = page.locator("#notice");
		await notice.filter({ hasText: "has U+202E at character 1" }).waitFor({ state: "visible", ...LIVE });
		expect(await notice.textContent()).not.toMatch(/[\u202e]/);
		expect(await page.locator(".view-head h1").textContent()).toBe("Runs · \\u202egnp.exe");
		expect(await page.locator(".view-head a", { hasText: "Logs" }).getAttribute("href")).toBe("/agents/%E2%80%AEgnp.exe/logs");
		await page.close();
	});

	it("signs in with a token: a wrong one shows the API's message, a right one the fleet", async () => {
		const page = await open("/");
		await page.locator("#signin").waitFor({ state: "visible" });
		await page.locator("#token").fill("not-a-real-token-0000000000");
		await page.locator("#signin-form button[type=submit]").click();
		await page.locator("#signin-error", { hasText: "invalid token" }).waitFor(LIVE);
		await shot(page, "signin");

		await page.locator("#token").fill(tokens.read);
		await page.locator("#signin-form button[type=submit]").click();
		for (const name of ["daily-digest", "site-watch", "triage"]) {
			await page.locator(`#fleet-table tr[data-agent="${name}"]`).waitFor(LIVE);
		}
		// What fails though an agent runs is said in its row: triage's hook URLs are not set here.
		await page.locator(`#fleet-table tr[data-agent="triage"] .reason`, { hasText: "secret TRIAGE_AUDIT_HOOK_URL (after_run hook) is not set" }).waitFor(LIVE);
		// A read token sees everything but is offered no action: each would be refused with a 403.
		await page.locator('body[data-role="read"]').waitFor({ ...LIVE, state: "attached" });
		expect(await page.locator(`#fleet-table tr[data-agent="daily-digest"] button:visible`).count()).toBe(0);
		// The token is in session storage, never in the address bar.
		expect(page.url()).toBe(`${url}/`);
		expect(await page.evaluate(() => sessionStorage.getItem("drover.token"))).toBe(tokens.read);
		await page.locator("#sign-out").click();
		await page.locator("#signin").waitFor({ state: "visible" });
		expect(await page.evaluate(() => sessionStorage.getItem("drover.token"))).toBeNull();
		await page.close();
	});

	it("says a waiting approval expired once its time has passed, though the page was drawn before", async () => {
		const { job } = await awaitingApproval(`dash-expiry-${run}`, { text: "Filed." });
		const page = await signedIn(`/jobs/${job.id}`, tokens.operate, { fakeClock: true });
		await page.locator("#approval-requested", { hasText: "expires in" }).waitFor(LIVE);
		// Past the job's 5-minute timeout on the page's clock, before the alarm that records it.
		await page.clock.runFor(6 * 60_000);
		await page.locator("#approval-requested", { hasText: /; expired (1 minute|\d+ seconds) ago\)$/ }).waitFor(LIVE);
		expect((await getJob(job.id)).status).toBe("approval_pending");
		await page.close();
		// Decided, so that the model's answer scripted for after it is not left to a later test's job.
		await call("POST", `/v1/jobs/${job.id}/approval`, tokens.operate, { decision: "deny" });
		expect(await settled(job.id)).toBe("completed");
	});

	it("shows a job live on its page: lines arrive, an approval is made with edited input, and it completes without a reload", async () => {
		const agent = await createAgent(`dash-live-${run}`, { tools: [TICKET_TOOL] });
		const page = await signedIn("/jobs");
		// A slow model: the page is open before the first answer arrives.
		await script({ delay_ms: 1500, then: { text: "Filing it.", tool_use: { name: "create_ticket", input: { title: "Disk full" } } } }, { delay_ms: 1500, then: { text: "Ticket filed." } });
		const job = await trigger(agent, "File a ticket about the disk.");
		await page.goto(`${url}/jobs/${job.id}`);
		await page.locator("#view").waitFor({ state: "visible" });
		await page.evaluate(() => {
			(globalThis as unknown as { marker: string }).marker = "same document";
		});

		// The first line (init) and the status come in while the model is still thinking.
		await page.locator("#job-log li[data-line='1']").waitFor(LIVE);
		await page.locator("#job-approval").waitFor({ state: "visible", ...LIVE });
		await page.locator("#job-status .badge", { hasText: "approval pending" }).waitFor(LIVE);
		expect(await page.locator("#approval-tool").textContent()).toBe("create_ticket");
		expect(JSON.parse(await page.locator("#approval-input").inputValue())).toEqual({ title: "Disk full" });
		// When it counts as denied (here the job's 5-minute timeout, before its 30-minute approval_timeout).
		const { expires_at } = (await getJob(job.id)).pending_approval!;
		expect(await page.locator("#approval-requested").textContent()).toMatch(/^ \(asked .+; expires in [45] minutes\)$/);
		expect(await page.locator("#approval-requested time").nth(1).getAttribute("datetime")).toBe(expires_at);
		await page.locator("#job-log li.t-tool_use", { hasText: "create_ticket" }).waitFor(LIVE);
		await shot(page, "job-approval");

		// Input the tool's schema refuses: the panel says why, and the job still waits.
		await page.locator("#approval-input").fill(JSON.stringify({ title: 5 }));
		await page.locator("#approval-approve").click();
		await page.locator("#approval-error", { hasText: "does not match create_ticket's input_schema" }).waitFor(LIVE);
		expect((await getJob(job.id)).status).toBe("approval_pending");

		await page.locator("#approval-input").fill(JSON.stringify({ title: "Disk full on db-1" }));
		const waitingCall = (await getJob(job.id)).pending_approval!.tool_use_id;
		const [approval] = await Promise.all([
			page.waitForRequest((r) => r.url().endsWith(`/v1/jobs/${job.id}/approval`)),
			page.locator("#approval-approve").click(),
		]);
		// The edited input goes with the approval (the model's own would be sent without tool_input),
		// naming the call it is for: the one the panel shows.
		expect(approval.postDataJSON()).toEqual({ decision: "approve", tool_use_id: waitingCall, tool_input: { title: "Disk full on db-1" } });
		await page.locator("#job-approval").waitFor({ state: "hidden", ...LIVE });
		await page.locator("#job-log li.t-assistant", { hasText: "Ticket filed." }).waitFor(LIVE);
		// The log's approval line says the input was edited, and shows what was sent.
		await page.locator("#job-log li.t-system", { hasText: 'with edited input {"title":"Disk full on db-1"}' }).waitFor(LIVE);
		await page.locator("#job-status .badge", { hasText: "completed" }).waitFor(LIVE);
		await page.locator("#log-state", { hasText: "ended" }).waitFor(LIVE);
		// Still the same document: everything above arrived over the stream.
		expect(await page.evaluate(() => (globalThis as unknown as { marker?: string }).marker)).toBe("same document");
		expect(await page.locator("#job-summary").textContent()).toContain("Ticket filed.");
		expect(await page.locator("#job-transitions li").count()).toBeGreaterThanOrEqual(4);
		expect(await page.locator("#job-usage tbody tr").count()).toBeGreaterThanOrEqual(1);
		const record = await getJob(job.id);
		expect(record.status).toBe("completed");

		// Every line exactly once, in order, matching the stored JSONL.
		const jsonl = await (await fetch(`${url}/v1/jobs/${job.id}/output`, { headers: { authorization: `Bearer ${tokens.read}` } })).text();
		const stored = jsonl.trim().split("\n");
		const lineNumbers = await page.locator("#job-log li").evaluateAll((lis) => lis.map((li) => Number(li.getAttribute("data-line"))));
		expect(lineNumbers).toEqual(stored.map((_, i) => i + 1));

		// Download JSONL: fetched with the token, saved from a Blob.
		const [download] = await Promise.all([page.waitForEvent("download"), page.locator("#job-download").click()]);
		expect(download.suggestedFilename()).toBe(`${job.id}.jsonl`);
		expect(readFileSync(await download.path(), "utf8")).toBe(jsonl);
		await shot(page, "job");

		// Fork it: a new job from this conversation, on its own page, whose model asks for the tool
		// again; deny it there, and the job finishes.
		await script({ tool_use: { name: "create_ticket", input: { title: "Disk full again" } } }, { text: "Not filed, as told." });
		await page.locator("#job-fork").click();
		await page.getByRole("dialog", { name: `Fork ${job.id}` }).getByRole("button", { name: "Fork", exact: true }).click();
		await page.waitForURL((u) => /\/jobs\/job-/.test(u.pathname) && !u.pathname.endsWith(job.id), LIVE);
		const forkId = new URL(page.url()).pathname.split("/").at(-1)!;
		await page.locator("#job-facts dd a", { hasText: job.id }).waitFor(LIVE);
		await page.locator("#job-status .badge", { hasText: "approval pending" }).waitFor(LIVE);
		// Deny asks first, in a dialog with an optional reason: Cancel sends nothing, and the call still waits.
		const denials: unknown[] = [];
		page.on("request", (r) => {
			if (r.method() === "POST" && r.url().endsWith(`/v1/jobs/${forkId}/approval`)) denials.push(r.postDataJSON());
		});
		const deny = page.getByRole("dialog", { name: "Deny the call to create_ticket" });
		await page.locator("#approval-deny").click();
		await deny.waitFor();
		expect(await deny.textContent()).toContain("the model is told it was refused");
		expect(await deny.getByLabel("Reason (optional)").inputValue()).toBe("");
		expect(await deny.textContent()).toMatch(/Enter denies\./);
		await deny.getByRole("button", { name: "Cancel" }).click();
		await deny.waitFor({ state: "hidden" });
		expect(denials).toEqual([]);
		const waiting = await getJob(forkId);
		expect(waiting.status).toBe("approval_pending");
		const forkCall = waiting.pending_approval!.tool_use_id;
		await page.locator("#approval-deny").click();
		await deny.getByLabel("Reason (optional)").fill("Tickets go to the storage queue.");
		const [denial] = await Promise.all([
			page.waitForRequest((r) => r.url().endsWith(`/v1/jobs/${forkId}/approval`)),
			deny.getByRole("button", { name: "Deny", exact: true }).click(),
		]);
		expect(denial.postDataJSON()).toEqual({ decision: "deny", tool_use_id: forkCall, reason: "Tickets go to the storage queue." });
		await deny.waitFor({ state: "hidden" });
		await page.locator("#notice", { hasText: "Denied" }).waitFor(LIVE);
		await page.locator("#job-status .badge", { hasText: "completed" }).waitFor(LIVE);
		// The model was told why, as the log shows.
		await page.locator("#job-log li.t-tool_result", { hasText: "the reason given: Tickets go to the storage queue." }).waitFor(LIVE);
		await page.close();
	});

	it("shows the newest status when the job's records arrive late or out of order", async () => {
		const agent = await createAgent(`dash-order-${run}`, { tools: [TICKET_TOOL] });
		const approvalPending = (page: Page) => page.locator("#job-status .badge", { hasText: "approval pending" }).waitFor(LIVE);

		// A read of the job that is still in flight when the next status events and the end come in:
		// the page must read it again rather than keep what that read found.
		await script({ tool_use: { name: "create_ticket", input: { title: "Disk full" } } }, { delay_ms: 3000, then: { text: "Filed." } });
		const first = await trigger(agent);
		const page = await signedIn(`/jobs/${first.id}`);
		await approvalPending(page);
		let releaseRead!: () => Promise<void>;
		let holding = false;
		let readStatus!: (status: string) => void;
		const readHeld = new Promise<string>((resolve) => (readStatus = resolve));
		// Registered before the approval, so the read it sets off is the one held. A read the stream's
		// first status event set off (approval_pending, as shown) may still come after this on a busy
		// machine: it goes through, as it says nothing new.
		await page.route((u) => u.pathname === `/v1/jobs/${first.id}`, async (route) => {
			if (route.request().method() !== "GET" || holding) return route.continue();
			const response = await fetchWhole(route);
			const status = ((await response.json()) as JobRecord).status;
			if (status === "approval_pending") return route.fulfill({ response });
			holding = true;
			releaseRead = () => route.fulfill({ response });
			readStatus(status);
		});
		await call("POST", `/v1/jobs/${first.id}/approval`, tokens.operate, { decision: "approve" });
		// The status event for the approval starts the read; the job completes while it is held.
		expect(await readHeld).toBe("running");
		await page.locator("#log-state", { hasText: "ended" }).waitFor(LIVE);
		await releaseRead();
		await page.locator("#job-status .badge", { hasText: "completed" }).waitFor(LIVE);
		await page.unrouteAll();

		// An action's answer that lands after the stream has already shown a later status.
		await script({ tool_use: { name: "create_ticket", input: { title: "Disk full again" } } }, { text: "Filed again." });
		const second = await trigger(agent);
		await page.goto(`${url}/jobs/${second.id}`);
		await approvalPending(page);
		let releaseAnswer!: () => Promise<void>;
		let answered!: () => void;
		const answerHeld = new Promise<void>((resolve) => (answered = resolve));
		await page.route((u) => u.pathname === `/v1/jobs/${second.id}/approval`, async (route) => {
			const response = await route.fetch();
			releaseAnswer = () => route.fulfill({ response });
			answered();
		});
		await page.locator("#approval-approve").click();
		await answerHeld;
		await page.locator("#job-status .badge", { hasText: "completed" }).waitFor(LIVE);
		await page.locator("#log-state", { hasText: "ended" }).waitFor(LIVE);
		await releaseAnswer();
		await page.locator("#notice", { hasText: "Approved" }).waitFor(LIVE);
		expect(await page.locator("#job-status .badge").textContent()).toBe("completed");
		expect(await page.locator("#job-approval").isHidden()).toBe(true);
		await page.close();
	});

	it("resumes the output stream after a dropped connection, with Last-Event-ID, without losing or repeating lines", async () => {
		const agent = await createAgent(`dash-resume-${run}`, {});
		await script({ text: "First answer, and the last." });
		const job = await trigger(agent);
		expect(await settled(job.id)).toBe("completed");

		const page = await signedIn("/incidents");
		const streamRequests: (string | null)[] = [];
		page.on("request", (r) => {
			if (r.url().endsWith(`/v1/jobs/${job.id}/stream`)) streamRequests.push(r.headers()["last-event-id"] ?? null);
		});
		let dropped = false;
		await page.route(`**/v1/jobs/${job.id}/stream`, async (route) => {
			if (dropped) return route.continue();
			dropped = true;
			// The first connection delivers two lines and then breaks (no `end` event).
			const full = await (await route.fetch()).text();
			const frames = full.split("\n\n").filter((f) => f.includes("event: line"));
			await route.fulfill({ status: 200, headers: { "content-type": "text/event-stream" }, body: `retry: 500\n\n${frames.slice(0, 2).join("\n\n")}\n\n` });
		});
		await page.goto(`${url}/jobs/${job.id}`);
		await page.locator("#log-state", { hasText: "ended" }).waitFor(LIVE);
		expect(streamRequests).toEqual([null, "2"]);
		const stored = (await (await fetch(`${url}/v1/jobs/${job.id}/output`, { headers: { authorization: `Bearer ${tokens.read}` } })).text()).trim().split("\n");
		const lineNumbers = await page.locator("#job-log li").evaluateAll((lis) => lis.map((li) => Number(li.getAttribute("data-line"))));
		expect(stored.length).toBeGreaterThan(2);
		expect(lineNumbers).toEqual(stored.map((_, i) => i + 1));
		await page.close();
	});

	it("waits what a 429's Retry-After asks before asking for the stream again (the job's streams at their cap), then shows the log whole", async () => {
		const agent = await createAgent(`dash-stream-cap-${run}`, {});
		await script({ text: "Answered once the slot freed." });
		const job = await trigger(agent);
		expect(await settled(job.id)).toBe("completed");
		const page = await signedIn("/incidents", tokens.read, { fakeClock: true });
		let asked = 0;
		await page.route(`**/v1/jobs/${job.id}/stream`, async (route) => {
			if (++asked > 1) return route.continue();
			// As the agent's object answers a stream beyond its cap.
			await route.fulfill({
				status: 429,
				headers: { "content-type": "application/json", "retry-after": "30" },
				body: JSON.stringify({ error: { code: "rate_limited", message: `job ${job.id} already has 100 live streams` } }),
			});
		});
		await page.goto(`${url}/jobs/${job.id}`);
		await page.locator("#log-state", { hasText: "reconnecting" }).waitFor(LIVE);
		expect(asked).toBe(1);
		// The stream's own retry (2 s) and more pass: it is not asked for again before the 30 s.
		await page.clock.runFor(29_000);
		expect(asked).toBe(1);
		await page.clock.runFor(1_000);
		await page.locator("#log-state", { hasText: "ended" }).waitFor(LIVE);
		expect(asked).toBe(2);
		const stored = (await (await fetch(`${url}/v1/jobs/${job.id}/output`, { headers: { authorization: `Bearer ${tokens.read}` } })).text()).trim().split("\n");
		const lineNumbers = await page.locator("#job-log li").evaluateAll((lis) => lis.map((li) => Number(li.getAttribute("data-line"))));
		expect(lineNumbers).toEqual(stored.map((_, i) => i + 1));
		await page.close();
	});

	it("draws a 10,000-line log whole, each line once and in order, when the stream replays it in one burst", async () => {
		const agent = await createAgent(`dash-long-${run}`, {});
		await script({ text: "Short job, long log." });
		const job = await trigger(agent);
		expect(await settled(job.id)).toBe("completed");
		const page = await signedIn("/incidents");
		const LINES = 10_000;
		// The real record, with a made-up stream as a job that wrote 10,000 lines replays it.
		await page.route(`**/v1/jobs/${job.id}/stream`, (route) => {
			const frames = Array.from({ length: LINES }, (_, i) => `id: ${i + 1}\nevent: line\ndata: ${JSON.stringify({ type: "system", subtype: "note", content: `line ${i + 1}` })}`);
			return route.fulfill({ status: 200, headers: { "content-type": "text/event-stream" }, body: `${frames.join("\n\n")}\n\nevent: end\ndata: {}\n\n` });
		});
		await page.goto(`${url}/jobs/${job.id}`);
		await page.locator("#log-state", { hasText: "ended" }).waitFor(LIVE);
		const numbers = await page.locator("#job-log li").evaluateAll((lis) => lis.map((li) => Number(li.getAttribute("data-line"))));
		expect(numbers).toHaveLength(LINES);
		expect(numbers.every((n, i) => n === i + 1)).toBe(true);
		await page.close();
	});

	it("formats a long log's times with a format made once, not one per line", async () => {
		const agent = await createAgent(`dash-fmt-${run}`, {});
		await script({ text: "Short job." });
		const job = await trigger(agent);
		expect(await settled(job.id)).toBe("completed");
		const page = await signedIn("/incidents");
		const LINES = 2_000;
		const at = new Date().toISOString();
		await page.route(`**/v1/jobs/${job.id}/stream`, (route) => {
			const frames = Array.from({ length: LINES }, (_, i) => `id: ${i + 1}\nevent: line\ndata: ${JSON.stringify({ type: "assistant", content: `line ${i + 1}`, timestamp: at, usage: { input_tokens: 1200, output_tokens: 30 } })}`);
			return route.fulfill({ status: 200, headers: { "content-type": "text/event-stream" }, body: `${frames.join("\n\n")}\n\nevent: end\ndata: {}\n\n` });
		});
		// Date's and Number's toLocale*String(locale, options) build a new format at each call (half a
		// millisecond each in Chromium): counted, as a line drew two of them and two numbers.
		await page.addInitScript(() => {
			const w = globalThis as unknown as { localeCalls: number };
			w.localeCalls = 0;
			for (const [proto, names] of [[Date.prototype, ["toLocaleString", "toLocaleTimeString", "toLocaleDateString"]], [Number.prototype, ["toLocaleString"]]] as const) {
				for (const name of names) {
					const real = (proto as unknown as Record<string, (...a: unknown[]) => string>)[name]!;
					(proto as unknown as Record<string, unknown>)[name] = function (this: unknown, ...a: unknown[]) {
						w.localeCalls++;
						return real.apply(this, a);
					};
				}
			}
		});
		await page.goto(`${url}/jobs/${job.id}`);
		await page.locator("#log-state", { hasText: "ended" }).waitFor(LIVE);
		expect(await page.locator("#job-log li[data-line]").count()).toBe(LINES);
		// The times and numbers are drawn all the same, as before.
		const first = page.locator('#job-log li[data-line="1"]');
		expect(await first.locator(".ts").first().textContent()).toBe(new Date(at).toLocaleTimeString("en-GB", { hour12: false, timeZone: await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone) }));
		expect(await first.locator(".body").textContent()).toContain("[in 1,200 · out 30]");
		expect(await page.evaluate<number>("window.localeCalls")).toBeLessThan(10);
		await page.close();
	});

	it("paints a 20,000-line log as its lines are drawn, not only once the last is", async () => {
		const agent = await createAgent(`dash-paint-${run}`, {});
		await script({ text: "Short job, long log." });
		const job = await trigger(agent);
		expect(await settled(job.id)).toBe("completed");
		const page = await signedIn("/incidents");
		const LINES = 20_000;
		const at = new Date().toISOString();
		await page.route(`**/v1/jobs/${job.id}/stream`, (route) => {
			const frames = Array.from({ length: LINES }, (_, i) => `id: ${i + 1}\nevent: line\ndata: ${JSON.stringify({ type: "system", subtype: "note", content: `line ${i + 1} of a replayed log, as long as a model's turn often is`, timestamp: at })}`);
			return route.fulfill({ status: 200, headers: { "content-type": "text/event-stream" }, body: `${frames.join("\n\n")}\n\nevent: end\ndata: {}\n\n` });
		});
		// Each frame the page paints notes how many lines the log shows then: a page held by one long
		// task paints none between the first line read and the last one drawn.
		// (A string: no DOM types here.)
		await page.addInitScript(`(() => {
			window.painted = [];
			const note = () => {
				window.painted.push(document.querySelectorAll("#job-log li[data-line]").length);
				requestAnimationFrame(note);
			};
			requestAnimationFrame(note);
		})()`);
		await page.goto(`${url}/jobs/${job.id}`);
		await page.locator("#log-state", { hasText: "ended" }).waitFor({ timeout: 50_000 });
		// The page keeps the newest 10,000 lines: the older ones went as the newer came.
		const KEPT = 10_000;
		const numbers = await page.locator("#job-log li[data-line]").evaluateAll((lis) => lis.map((li) => Number(li.getAttribute("data-line"))));
		expect(numbers).toEqual(Array.from({ length: KEPT }, (_, i) => LINES - KEPT + 1 + i));
		expect(await page.locator("#log-earlier-text").textContent()).toBe("Lines 1–10,000 are not shown: the page keeps the newest 10,000. The JSONL download has them all.");
		const painted = await page.evaluate<number[]>("window.painted");
		const partial = new Set(painted.filter((n) => n > 0 && n < KEPT));
		// Several frames, each showing more of the log than the one before.
		expect(partial.size).toBeGreaterThan(3);
		await page.close();
	});

	it("opens a large job's log at its newest 10,000 lines, asking the stream for no more, and says how many are not shown beside the download", async () => {
		const agent = await createAgent(`dash-large-${run}`, {});
		await script({ text: "Short job, as large as its routed output." });
		const job = await trigger(agent);
		expect(await settled(job.id)).toBe("completed");
		const page = await signedIn("/incidents");
		const LINES = 1_250_000;
		const frame = (n: number) => `id: ${n}\nevent: line\ndata: ${JSON.stringify({ type: "system", subtype: "note", content: `line ${n}` })}`;
		// The job's output as one of 1,250,000 lines (a 100 MB output's order) answers: its one-line tail names its last line.
		const tails: string[] = [];
		await page.route((u) => u.pathname === `/v1/jobs/${job.id}/output` && u.searchParams.has("lines"), (route) => {
			tails.push(new URL(route.request().url()).searchParams.get("lines")!);
			return route.fulfill({ status: 200, headers: { "content-type": "application/x-ndjson", "x-drover-first-line": String(LINES) }, body: `${JSON.stringify({ type: "system", subtype: "note", content: `line ${LINES}` })}\n` });
		});
		const asked: (string | null)[] = [];
		let sentFrames = 0;
		await page.route(`**/v1/jobs/${job.id}/stream`, (route) => {
			const after = route.request().headers()["last-event-id"] ?? null;
			asked.push(after);
			const frames = Array.from({ length: LINES - Number(after ?? 0) }, (_, i) => frame(Number(after ?? 0) + 1 + i));
			sentFrames += frames.length;
			return route.fulfill({ status: 200, headers: { "content-type": "text/event-stream" }, body: `${frames.join("\n\n")}\n\nevent: end\ndata: {}\n\n` });
		});
		await page.goto(`${url}/jobs/${job.id}`);
		await page.locator("#log-state", { hasText: "ended" }).waitFor({ timeout: 50_000 });
		expect(tails).toEqual(["1"]);
		// The stream opens after line 1,240,000: the 1,240,000 lines the page would not keep are not sent.
		expect(asked).toEqual(["1240000"]);
		expect(sentFrames).toBe(10_000);
		const numbers = await page.locator("#job-log li[data-line]").evaluateAll((lis) => lis.map((li) => Number(li.getAttribute("data-line"))));
		expect(numbers).toEqual(Array.from({ length: 10_000 }, (_, i) => 1_240_001 + i));
		// Seven-digit numbers fit their column, not running into the time beside them.
		const overruns = await page.locator("#job-log li[data-line] .n").evaluateAll((ns) => ns.slice(-3).map((n) => n.scrollWidth - n.clientWidth));
		expect(overruns).toEqual([0, 0, 0]);
		expect(await page.locator("#log-earlier-text").textContent()).toBe("Lines 1–1,240,000 are not shown: the page keeps the newest 10,000. The JSONL download has them all.");
		// The note's button downloads the whole output, as the page's own does.
		const [download] = await Promise.all([page.waitForEvent("download"), page.locator("#log-earlier-download").click()]);
		expect(download.suggestedFilename()).toBe(`${job.id}.jsonl`);
		await page.close();
	});

	it("reads the lines the live log does not keep a thousand at a time, by their numbers: Earlier, Later, from a line typed", async () => {
		const agent = await createAgent(`dash-history-${run}`, {});
		await script({ text: "Short job, long routed log." });
		const job = await trigger(agent);
		expect(await settled(job.id)).toBe("completed");
		const page = await signedIn("/incidents");
		const LINES = 25_000;
		const body = (n: number) => JSON.stringify({ type: "system", subtype: "note", content: `line ${n}` });
		// The job's output as one of 25,000 lines: its tail, and any part by line numbers (?after=&lines=).
		const parts: string[] = [];
		await page.route((u) => u.pathname === `/v1/jobs/${job.id}/output` && u.searchParams.has("lines"), (route) => {
			const q = new URL(route.request().url()).searchParams;
			const lines = Number(q.get("lines"));
			if (!q.has("after")) return route.fulfill({ status: 200, headers: { "content-type": "application/x-ndjson", "x-drover-first-line": String(LINES) }, body: `${body(LINES)}\n` });
			const after = Number(q.get("after"));
			parts.push(`${after}+${lines}`);
			const numbers = Array.from({ length: Math.max(0, Math.min(lines, LINES - after)) }, (_, i) => after + 1 + i);
			return route.fulfill({ status: 200, headers: { "content-type": "application/x-ndjson", "x-drover-first-line": String(after + 1) }, body: numbers.map((n) => `${body(n)}\n`).join("") });
		});
		await page.route(`**/v1/jobs/${job.id}/stream`, (route) => {
			const after = Number(route.request().headers()["last-event-id"] ?? 0);
			const frames = Array.from({ length: LINES - after }, (_, i) => `id: ${after + 1 + i}\nevent: line\ndata: ${body(after + 1 + i)}`);
			return route.fulfill({ status: 200, headers: { "content-type": "text/event-stream" }, body: `${frames.join("\n\n")}\n\nevent: end\ndata: {}\n\n` });
		});
		await page.goto(`${url}/jobs/${job.id}`);
		await page.locator("#log-state", { hasText: "ended" }).waitFor({ timeout: 50_000 });
		expect(await page.locator("#log-history").isVisible()).toBe(false);
		const history = page.locator("#log-history-lines li[data-line]");
		const shown = async () => {
			const numbers = await history.evaluateAll((lis) => lis.map((li) => Number(li.getAttribute("data-line"))));
			const texts = await history.locator(".body").allTextContents();
			// Each line drawn under its own number.
			expect(texts).toEqual(numbers.map((n) => `line ${n}`));
			return [numbers[0], numbers.at(-1), numbers.length];
		};
		const range = page.locator("#log-history-range");
		const earlier = page.getByRole("button", { name: "Earlier", exact: true });
		const later = page.getByRole("button", { name: "Later", exact: true });
		// Opened on the thousand lines just before those the live log shows.
		await page.getByRole("button", { name: "Read earlier lines" }).click();
		await range.filter({ hasText: "Lines 14,001–15,000 of the 15,000 not shown below" }).waitFor(LIVE);
		expect(await shown()).toEqual([14_001, 15_000, 1_000]);
		expect(parts).toEqual(["14000+1000"]);
		expect(await later.isDisabled()).toBe(true);
		expect(await page.evaluate<string | undefined>("document.activeElement?.id")).toBe("log-history-earlier");
		await earlier.click();
		await range.filter({ hasText: "Lines 13,001–14,000 " }).waitFor(LIVE);
		expect(await shown()).toEqual([13_001, 14_000, 1_000]);
		expect(await later.isDisabled()).toBe(false);
		// From a line typed: the first page has no Earlier; one too near the end shows the last thousand.
		await page.getByLabel("From line").fill("1");
		await page.getByLabel("From line").press("Enter");
		await range.filter({ hasText: "Lines 1–1,000 " }).waitFor(LIVE);
		expect(await shown()).toEqual([1, 1_000, 1_000]);
		expect(await earlier.isDisabled()).toBe(true);
		await later.click();
		await range.filter({ hasText: "Lines 1,001–2,000 " }).waitFor(LIVE);
		await page.getByLabel("From line").fill("14500");
		await page.getByRole("button", { name: "Go", exact: true }).click();
		await range.filter({ hasText: "Lines 14,001–15,000 " }).waitFor(LIVE);
		expect(parts).toEqual(["14000+1000", "13000+1000", "0+1000", "1000+1000", "14000+1000"]);
		// The live log is as it was: the newest 10,000.
		expect(await page.locator("#job-log li[data-line]").count()).toBe(10_000);
		// Closed, the focus goes back to the button that opened it.
		await page.getByRole("button", { name: "Close", exact: true }).click();
		expect(await page.locator("#log-history").isVisible()).toBe(false);
		expect(await page.evaluate<string | undefined>("document.activeElement?.id")).toBe("log-earlier-read");
		await page.close();
	});

	it("filters jobs by when they were created, in the viewer's time, keeping the range in the address as UTC", async () => {
		const agent = await createAgent(`dash-range-${run}`, {});
		await script({ text: "Done." });
		const job = await trigger(agent);
		expect(await settled(job.id)).toBe("completed");
		// The second the job was created in, as a UTC instant: from it the job is listed, before it not.
		const second = Math.floor(Date.parse((await getJob(job.id)).created_at) / 1000) * 1000;
		const utc = new Date(second).toISOString();
		// A viewer half an hour off UTC (Kolkata, +05:30): what it types is its own time.
		const zoned = await browser.newContext({ viewport: { width: 1280, height: 800 }, timezoneId: "Asia/Kolkata" });
		const page = await zoned.newPage();
		page.on("pageerror", (err) => pageErrors.push(`zoned: ${err.message}`));
		const local = new Date(second + 330 * 60_000).toISOString().slice(0, 19);
		const asked: string[] = [];
		page.on("request", (r) => {
			const u = new URL(r.url());
			if (u.pathname === "/v1/jobs") asked.push(u.search);
		});
		await signInOn(page, `/jobs?agent=${agent}`, tokens.read);
		const rows = page.locator("#jobs-table tbody tr");
		await rows.first().waitFor(LIVE);
		expect(await page.locator("#jobs-filter .filter-zone").first().textContent()).toBe("(GMT+5:30)");
		await page.locator("#jobs-filter input[name=until]").fill(local);
		await page.locator("#jobs-empty", { hasText: "No jobs match." }).waitFor(LIVE);
		expect(asked.at(-1)).toContain(`until=${encodeURIComponent(new Date(second).toISOString())}`);
		expect(new URL(page.url()).searchParams.get("until")).toBe(utc);
		await page.locator("#jobs-filter input[name=until]").fill("");
		await page.locator("#jobs-filter input[name=since]").fill(local);
		// Applied once the typing rests (or the field is left).
		await page.waitForURL((u) => u.searchParams.get("since") === utc, LIVE);
		await page.locator(`#jobs-table tr[data-job="${job.id}"]`).waitFor(LIVE);
		expect(await rows.count()).toBe(1);
		expect(asked.at(-1)).toContain(`since=${encodeURIComponent(utc)}`);
		expect(new URL(page.url()).searchParams.has("until")).toBe(false);
		// The address opens the same list, the field showing the viewer's time; one it cannot read is said and left out.
		await page.goto(`${url}/jobs?agent=${agent}&since=${encodeURIComponent(utc)}`);
		await page.locator(`#jobs-table tr[data-job="${job.id}"]`).waitFor(LIVE);
		// As the browser gives a datetime-local value back: normalized, a time on the minute without ":00"
		// (a job created in a minute's first second, 1 run in 60, read "…T21:10" against "…T21:10:00").
		expect(await page.locator("#jobs-filter input[name=since]").inputValue()).toBe(local.endsWith(":00") ? local.slice(0, 16) : local);
		await page.goto(`${url}/jobs?agent=${agent}&until=yesterday`);
		await page.locator("#notice", { hasText: "Not a filter this list has, so left out: until=yesterday." }).waitFor(LIVE);
		expect(await page.locator("#jobs-filter input[name=until]").inputValue()).toBe("");
		await page.locator(`#jobs-table tr[data-job="${job.id}"]`).waitFor(LIVE);
		// Typed a part at a time, a time changes at each part (the year's digits: 0002, 0020, 0202):
		// the list is asked for once, for the time typed, not for each.
		const from = asked.length;
		await page.locator("#jobs-filter input[name=until]").evaluate((el, parts) => {
			for (const value of parts) {
				(el as unknown as { value: string }).value = value;
				el.dispatchEvent(new Event("change", { bubbles: true }));
			}
		}, ["0002", "0020", "0202", local.slice(0, 4)].map((year) => year + local.slice(4)));
		await page.locator("#jobs-empty", { hasText: "No jobs match." }).waitFor(LIVE);
		expect([...new Set(asked.slice(from).map((q) => new URLSearchParams(q).get("until")))]).toEqual([utc]);
		await zoned.close();
	});

	it("lists jobs with filters and an Older button, and cancels a running job from its page", async () => {
		// One job holds the only slot (its model never answers); the rest queue behind it.
		const agent = await createAgent(`dash-queue-${run}`, { max_concurrent: 1 });
		await script({ hang: true });
		const running = await trigger(agent, "Hold the slot.");
		await expect.poll(async () => (await getJob(running.id)).status, LIVE).toBe("running");
		const queued: JobRecord[] = [];
		for (let i = 0; i < 26; i++) queued.push(await trigger(agent, `Queued ${i}.`));

		const page = await signedIn(`/jobs?agent=${agent}`);
		await page.locator("#jobs-table tbody tr").nth(24).waitFor(LIVE);
		expect(await page.locator("#jobs-table tbody tr").count()).toBe(25);
		await page.locator("#jobs-older").click();
		await page.locator("#jobs-table tbody tr").nth(26).waitFor(LIVE);
		await page.locator("#jobs-older").waitFor({ state: "hidden" });
		expect(await page.locator("#jobs-table tbody tr").count()).toBe(27);
		// Filters: status narrows to the running one, and is kept in the address for a reload.
		await page.locator("#jobs-filter select[name=status]").selectOption("running");
		await page.locator(`#jobs-table tbody tr[data-job="${running.id}"]`).waitFor(LIVE);
		await expect.poll(() => page.locator("#jobs-table tbody tr").count(), LIVE).toBe(1);
		expect(new URL(page.url()).searchParams.get("status")).toBe("running");
		await page.locator("#jobs-filter select[name=status]").selectOption("");
		await page.locator("#jobs-table tbody tr").nth(24).waitFor(LIVE);
		await shot(page, "jobs");

		// Pending jobs are cancelled through the API so none of them calls the model afterwards.
		for (const j of queued) await call("POST", `/v1/jobs/${j.id}/cancel`, tokens.operate, {});
		await page.goto(`${url}/jobs/${running.id}`);
		await page.locator("#job-status .badge", { hasText: "running" }).waitFor(LIVE);
		// Cancel asks first, with an optional one-line reason that has the focus: Escape and "Keep it"
		// send nothing; Enter in the field cancels, with the reason, which the transition records.
		const cancels: unknown[] = [];
		page.on("request", (r) => {
			if (r.method() === "POST" && r.url().endsWith(`/v1/jobs/${running.id}/cancel`)) cancels.push(r.postDataJSON());
		});
		const ask = page.getByRole("dialog", { name: `Cancel job ${running.id}` });
		const reason = ask.getByLabel("Reason (optional)");
		await page.locator("#job-cancel").click();
		await ask.waitFor();
		expect(await reason.evaluate((el) => el === (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement)).toBe(true);
		await page.keyboard.press("Escape");
		await ask.waitFor({ state: "hidden" });
		await page.locator("#job-cancel").click();
		await ask.getByRole("button", { name: "Keep it" }).click();
		await ask.waitFor({ state: "hidden" });
		expect(cancels).toEqual([]);
		expect((await getJob(running.id)).status).toBe("running");
		await page.locator("#job-cancel").click();
		await reason.fill("  Holding the slot too long  ");
		await shot(page, "cancel-job");
		await reason.press("Enter");
		await page.locator("#job-status .badge", { hasText: "cancelled" }).waitFor(LIVE);
		await ask.waitFor({ state: "hidden" });
		await page.locator("#notice span", { hasText: /^Cancelled$/ }).waitFor(LIVE);
		await page.locator("#job-cancel").waitFor({ state: "hidden" });
		await page.locator("#job-fork").waitFor({ state: "visible" });
		await page.locator("#job-continue").waitFor({ state: "visible" });
		await page.locator("#job-transitions li.to-cancelled", { hasText: "Holding the slot too long" }).waitFor(LIVE);
		expect(cancels).toEqual([{ reason: "Holding the slot too long" }]);
		expect((await getJob(running.id)).status).toBe("cancelled");
		await page.close();
	});

	it("sends force from the Cancel dialog only when its Force box is ticked", async () => {
		// (What force does to a tool call in flight is tested against the Worker itself: here, that the page asks for it.)
		const agent = await createAgent(`dash-force-${run}`, {});
		await script({ hang: true });
		const running = await trigger(agent, "Hang.");
		await expect.poll(async () => (await getJob(running.id)).status, LIVE).toBe("running");
		const page = await signedIn(`/jobs/${running.id}`);
		await page.locator("#job-status .badge", { hasText: "running" }).waitFor(LIVE);
		const cancels: unknown[] = [];
		page.on("request", (r) => {
			if (r.method() === "POST" && r.url().endsWith(`/v1/jobs/${running.id}/cancel`)) cancels.push(r.postDataJSON());
		});
		const ask = page.getByRole("dialog", { name: `Cancel job ${running.id}` });
		await page.locator("#job-cancel").click();
		const force = ask.getByLabel("Force: cut off a tool call in flight too");
		expect(await force.isChecked()).toBe(false);
		await force.check();
		await shot(page, "cancel-job-force");
		await ask.getByRole("button", { name: "Cancel job" }).click();
		await page.locator("#job-status .badge", { hasText: "cancelled" }).waitFor(LIVE);
		await ask.waitFor({ state: "hidden" });
		// A model call is cut off by any cancel: forced, it is a plain one.
		expect(cancels).toEqual([{ force: true }]);
		expect((await getJob(running.id)).status).toBe("cancelled");
		await page.close();
	});

	it("says a cancel that waits for a tool call in flight is requested, and one that ended the job is done", async () => {
		const agent = await createAgent(`dash-cancel-said-${run}`, {});
		await script({ hang: true });
		const running = await trigger(agent, "Hang.");
		await expect.poll(async () => (await getJob(running.id)).status, LIVE).toBe("running");
		const page = await signedIn(`/jobs/${running.id}`);
		await page.locator("#job-status .badge", { hasText: "running" }).waitFor(LIVE);
		const ask = page.getByRole("dialog", { name: `Cancel job ${running.id}` });
		const notice = page.locator("#notice span");
		// The e2e Worker's tool target answers at once, so no tool call stays in flight to be waited for:
		// the first cancel is answered as the API answers one that waits (the job still running, with
		// cancel_requested), and never reaches it.
		let waited = false;
		await page.route(`**/v1/jobs/${running.id}/cancel`, async (route) => {
			if (waited) return route.continue();
			waited = true;
			return route.fulfill({ json: { ...(await getJob(running.id)), cancel_requested: "cancelled by operator" } });
		});
		await page.locator("#job-cancel").click();
		await ask.getByRole("button", { name: "Cancel job" }).click();
		await ask.waitFor({ state: "hidden" });
		await notice.filter({ hasText: /^Cancel requested$/ }).waitFor(LIVE);
		await page.locator("#job-facts dt", { hasText: "Cancel requested" }).waitFor(LIVE);
		expect(await page.locator("#job-status").textContent()).toBe("running");

		// Its model call is cut off by a cancel: the answer shows the job cancelled, and the page says so.
		await page.locator("#job-cancel").click();
		await ask.getByRole("button", { name: "Cancel job" }).click();
		await page.locator("#job-status .badge", { hasText: "cancelled" }).waitFor(LIVE);
		await notice.filter({ hasText: /^Cancelled$/ }).waitFor(LIVE);
		expect((await getJob(running.id)).status).toBe("cancelled");
		await page.close();
	});

	it("downloads a job's plain-text output.log where its agent keeps one", async () => {
		const agent = await createAgent(`dash-log-${run}`, { output_to_file: true });
		await script({ text: "All fine.\nNothing to do." });
		const job = await trigger(agent, "Look.");
		expect(await settled(job.id)).toBe("completed");
		// Written in the closing work after the final status: asked for until it is there, as a user would.
		const logUrl = `${url}/v1/jobs/${job.id}/output.log`;
		const read = { headers: { authorization: `Bearer ${tokens.read}` } };
		await expect.poll(async () => (await fetch(logUrl, read)).status, LIVE).toBe(200);
		const log = await (await fetch(logUrl, read)).text();
		expect(log).toMatch(/ assistant All fine\.\n {4}Nothing to do\.\n/);
		const page = await signedIn(`/jobs/${job.id}`, tokens.read);
		await page.locator("#job-status .badge", { hasText: "completed" }).waitFor(LIVE);
		expect(await page.locator("#job-actions button:visible").allTextContents()).toEqual(["Download JSONL", "Download output.log"]);
		const [download] = await Promise.all([page.waitForEvent("download"), page.locator("#job-download-log").click()]);
		expect(download.suggestedFilename()).toBe(`${job.id}.log`);
		expect(readFileSync(await download.path(), "utf8")).toBe(log);
		await page.close();
	});

	it("shows a tool input waiting for approval with its bidi and control characters as escapes, approving what is shown unchanged", async () => {
		const agent = await createAgent(`dash-bidi-${run}`, { tools: [TICKET_TOOL] });
		const title = "report evil\u202etxt.exe \u001b[31m";
		await script({ tool_use: { name: "create_ticket", input: { title } } }, { text: "Filed." });
		const job = await trigger(agent, "File it.");
		await expect.poll(async () => (await getJob(job.id)).status, LIVE).toBe("approval_pending");
		const page = await signedIn(`/jobs/${job.id}`);
		await page.locator("#job-approval").waitFor({ state: "visible", ...LIVE });
		const shown = await page.locator("#approval-input").inputValue();
		expect(shown).toContain("evil\\u202etxt.exe \\u001b[31m");
		expect(shown).not.toMatch(/[\u202e\u001b]/);
		const bidiCall = (await getJob(job.id)).pending_approval!.tool_use_id;
		const [approval] = await Promise.all([page.waitForRequest((r) => r.url().endsWith(`/v1/jobs/${job.id}/approval`)), page.locator("#approval-approve").click()]);
		// The escapes are JSON's own: the input parses back to the model's, so nothing counts as edited.
		expect(approval.postDataJSON()).toEqual({ decision: "approve", tool_use_id: bidiCall });
		await page.close();
	});

	it("offers no action before the token's role is known, asking /v1/me again when it fails; a dialog gives focus back to its button", async () => {
		const page = await context.newPage();
		let refused = 0;
		await page.route("**/v1/me", (route) => (refused++ === 0 ? route.fulfill({ status: 503, contentType: "application/json", body: '{"error":{"code":"unavailable","message":"down"}}' }) : route.continue()));
		await signInOn(page, `/`, tokens.operate);
		const pause = page.locator('#fleet-table tr[data-agent="daily-digest"] button', { hasText: "Pause" });
		await page.locator('#fleet-table tr[data-agent="daily-digest"]').waitFor(LIVE);
		expect(await pause.isVisible()).toBe(false);
		// Shown once /v1/me, asked again, says the role allows it.
		await pause.waitFor({ state: "visible", ...LIVE });
		expect(refused).toBeGreaterThanOrEqual(2);
		await pause.focus();
		await page.keyboard.press("Enter");
		await page.getByRole("dialog").waitFor(LIVE);
		await page.keyboard.press("Escape");
		await page.getByRole("dialog").waitFor({ state: "detached", ...LIVE });
		await expect.poll(() => pause.evaluate((el) => el === (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement), LIVE).toBe(true);
		await page.close();
	});

	it("keeps keyboard focus on the link it was on when a poll redraws the jobs table", async () => {
		const agent = await createAgent(`dash-focus-${run}`, {});
		await script({ text: "One." });
		const job = await trigger(agent, "Go.");
		expect(await settled(job.id)).toBe("completed");
		const page = await signedIn(`/jobs?agent=${agent}`, tokens.read, { fakeClock: true });
		const link = page.locator(`#jobs-table tr[data-job="${job.id}"] a`, { hasText: job.id });
		await link.waitFor(LIVE);
		await link.focus();
		// A change for the poll to draw: the table's rows are rebuilt.
		await page.evaluate(`document.querySelector("#jobs-table tbody").dataset.before = "1"`);
		const reads: string[] = [];
		page.on("response", (r) => {
			if (new URL(r.url()).pathname === "/v1/jobs") reads.push(r.url());
		});
		await page.clock.runFor(10_000);
		await expect.poll(() => reads.length, LIVE).toBeGreaterThan(0);
		await expect.poll(() => page.evaluate<string | null>(`document.activeElement && document.activeElement.textContent`), LIVE).toBe(job.id);
		expect(await page.evaluate<boolean>(`document.activeElement !== document.body && document.activeElement.closest("tr").dataset.job === ${JSON.stringify(job.id)}`)).toBe(true);
		await page.close();
	});

	it("says so when the address names a status the list has not, and shows the address of what it lists", async () => {
		const page = await signedIn("/jobs?status=bogus&trigger_type=manual", tokens.read);
		await page.locator("#notice", { hasText: "Not a filter this list has, so left out: status=bogus." }).waitFor({ state: "visible", ...LIVE });
		expect(new URL(page.url()).search).toBe("?trigger_type=manual");
		expect(await page.locator('#jobs-filter select[name="trigger_type"]').inputValue()).toBe("manual");
		await page.close();
	});

	it("says a refused filter at its field, marked invalid until edited, and takes it away once a corrected filter loads", async () => {
		const page = await signedIn("/jobs", tokens.read, { fakeClock: true });
		await page.locator("#jobs-table").waitFor(LIVE);
		const agent = page.locator('#jobs-filter input[name="agent"]');
		const error = page.locator("#jobs-filter-error");
		await agent.fill("Bad Name");
		await agent.press("Enter");
		await error.filter({ hasText: "agent" }).waitFor({ state: "visible", ...LIVE });
		// Said with the field, which has the focus (the alert may be cut off), and marked wrong; not in the page's notice too.
		const said = (await error.textContent())!;
		expect(await accessibleDescription(page, '#jobs-filter input[name="agent"]')).toBe(said);
		expect(await agent.getAttribute("aria-invalid")).toBe("true");
		expect(await accessibleDescription(page, '#jobs-filter select[name="status"]')).toBeFalsy();
		expect(await page.locator("#notice").isVisible()).toBe(false);
		// The list's poll of the refused filter says it nowhere else either.
		await stepClock(page, 10_000);
		await stepClock(page, 10_000);
		expect(await page.locator("#notice").isVisible()).toBe(false);
		expect(await error.textContent()).toBe(said);
		await agent.fill("daily-digest");
		expect(await agent.getAttribute("aria-invalid")).toBeNull();
		await agent.press("Enter");
		await error.waitFor({ state: "hidden", ...LIVE });
		expect(await accessibleDescription(page, '#jobs-filter input[name="agent"]')).toBeFalsy();
		expect(await page.locator("#notice").isVisible()).toBe(false);
		expect(new URL(page.url()).searchParams.get("agent")).toBe("daily-digest");
		// An address whose filter is refused: said at its field as the page opens.
		await page.goto(`${url}/jobs?agent=Bad%20Name`);
		await error.filter({ hasText: "agent" }).waitFor({ state: "visible", ...LIVE });
		expect(await agent.getAttribute("aria-invalid")).toBe("true");
		expect(await page.locator("#notice").isVisible()).toBe(false);
		await page.close();
	});

	it("draws an agent's logs once after signing out and in again on the page", async () => {
		const agent = await createAgent(`dash-relog-${run}`, {});
		await script({ text: "One." });
		expect(await settled((await trigger(agent, "Go.")).id)).toBe("completed");
		const page = await signedIn(`/agents/${agent}/logs`, tokens.read);
		const sections = page.locator("#agent-logs section");
		await sections.first().waitFor(LIVE);
		const before = await sections.count();
		await page.locator("#sign-out").click();
		await page.locator("#token").fill(tokens.read);
		await page.locator("#signin-form button[type=submit]").click();
		await sections.first().waitFor(LIVE);
		await page.locator("#agent-logs-meta").waitFor(LIVE);
		expect(await sections.count()).toBe(before);
		await page.close();
	});

	it("draws the fleet's rows afresh after signing out and in again on the page, so an action's row is redrawn by the view that runs it", async () => {
		const agent = await createAgent(`dash-relog-fleet-${run}`, {});
		// A context of its own: its clock is held below, and a context's clock is every page's in it.
		const own = await browser.newContext({ viewport: { width: 1280, height: 800 } });
		const page = await own.newPage();
		page.on("pageerror", (err) => pageErrors.push(`relog: ${err.message}`));
		await page.clock.install();
		await signInOn(page, "/", tokens.operate);
		await page.locator("#view").waitFor({ state: "visible" });
		// The fleet answers the same until the pause is sent (its agents' times and sizes could else
		// differ between the two runs of the view), then as it is.
		let first: unknown = null;
		let pauseSent = false;
		page.on("request", (r) => {
			if (r.method() === "POST" && r.url().endsWith(`/v1/agents/${agent}/pause`)) pauseSent = true;
		});
		await page.route(/\/v1\/agents\?limit=100$/, async (route) => {
			if (pauseSent) return route.fallback();
			first ??= await (await fetchWhole(route)).json();
			await route.fulfill({ json: first });
		});
		await page.reload();
		const row = page.locator(`#fleet-table tr[data-agent="${agent}"]`);
		await row.waitFor(LIVE);
		await page.locator("#sign-out").click();
		await page.locator("#token").fill(tokens.operate);
		await page.locator("#signin-form button[type=submit]").click();
		await page.locator("#fleet-meta", { hasText: "agents" }).waitFor(LIVE);
		// No poll from here on: only the action's own reload can redraw the row.
		await page.clock.pauseAt(Date.now() + 1000);
		// Paused from the row: the row says so at once, not at the next poll (the clock stands still).
		await row.getByRole("button", { name: `Pause ${agent}` }).click();
		await page.getByRole("dialog", { name: `Pause ${agent}` }).getByRole("button", { name: "Pause", exact: true }).click();
		await row.getByRole("button", { name: `Resume ${agent}` }).waitFor(LIVE);
		expect((await call<{ paused: unknown }>("GET", `/v1/agents/${agent}`, tokens.read)).paused).not.toBeNull();
		await own.close();
	});

	it("reads /v1/status once as the fleet opens, signed in by the form or by a reload: the pill and the fleet's count share it", async () => {
		// The page's clock stands still (through the reload too), so no poll comes between the reads
		// counted: on real time, a machine slow to reach the reload 10 s after the first load was drawn
		// counted the view's poll as a second read.
		const page = await open("/", { fakeClock: true });
		await page.clock.pauseAt(Date.now() + 1000);
		const asked: string[] = [];
		page.on("request", (r) => {
			if (new URL(r.url()).pathname === "/v1/status") asked.push(r.method());
		});
		await page.locator("#token").fill(tokens.read);
		await page.locator("#signin-form button[type=submit]").click();
		await viewReady(page);
		expect(asked).toEqual(["GET"]);
		expect(await page.locator("#fleet-meta").textContent()).toMatch(/^[\d,]+ (of [\d,]+ )?agents? /);
		expect(await page.locator("#scheduler-pill").textContent()).toMatch(/\S/);
		await page.reload();
		await viewReady(page);
		expect(asked).toEqual(["GET", "GET"]);
		await page.close();
	});

	it("shows what a job runs with when asked, read once", async () => {
		const agent = await createAgent(`dash-manifest-${run}`, { system_prompt: "You watch the status page.", fallback_models: ["claude-haiku-5-5"], max_turns: 7 });
		await script({ text: "All fine." });
		const job = await trigger(agent, "Look.");
		expect(await settled(job.id)).toBe("completed");
		const { definition_revision } = await call<{ definition_revision: string }>("GET", `/v1/jobs/${job.id}`, tokens.read);
		const page = await signedIn(`/jobs/${job.id}`, tokens.read);
		const reads: string[] = [];
		page.on("request", (r) => {
			if (r.url().endsWith(`/v1/jobs/${job.id}/manifest`)) reads.push(r.url());
		});
		await page.locator("#job-status .badge", { hasText: "completed" }).waitFor(LIVE);
		expect(reads).toEqual([]);
		await page.getByText("What it runs with").click();
		const body = page.locator("#job-manifest-body");
		await body.locator("pre").waitFor(LIVE);
		expect(await body.locator("dt").allTextContents()).toEqual(["Models", "Max turns", "Timeout", "Tools", "Definition"]);
		expect(await body.locator("dd").nth(0).textContent()).toBe("claude-sonnet-5-5 → claude-haiku-5-5");
		expect(await body.locator("dd").nth(1).textContent()).toBe("7");
		expect(await body.locator("dd").nth(4).textContent()).toBe(definition_revision);
		expect(await body.locator("pre").textContent()).toMatch(/^You watch the status page\.\n\nYou are running as a drover job/);
		// Closed and opened again: not read again.
		await page.getByText("What it runs with").click();
		await page.getByText("What it runs with").click();
		expect(reads).toHaveLength(1);
		await page.close();
	});

	it("lists a job's tool calls when asked: status, approval, input and result; read again while the job runs", async () => {
		const agent = await createAgent(`dash-tools-${run}`, { tools: [TICKET_TOOL] });
		await script({ tool_use: { name: "create_ticket", input: { title: "Disk full evil\u202eexe.txt" } } }, { tool_use: { name: "create_ticket", input: { title: "Again" } } }, { text: "Done." });
		const job = await trigger(agent, "File it.");
		await expect.poll(async () => (await getJob(job.id)).status, LIVE).toBe("approval_pending");
		const page = await signedIn(`/jobs/${job.id}`, tokens.read);
		await page.locator("#job-status .badge", { hasText: "approval pending" }).waitFor(LIVE);
		// The record counts its calls as it ends: until then its Record says where they are.
		const toolCallsFact = () => page.locator("#job-facts dt", { hasText: /^Tool calls$/ }).locator("xpath=following-sibling::dd[1]").textContent();
		expect(await toolCallsFact()).toBe("counted when the job ends; any made so far are listed below");
		const body = page.locator("#job-tool-calls-body");
		const rows = body.locator("tbody tr");
		const summary = page.locator("#job-tool-calls summary");
		await summary.click();
		await rows.first().waitFor(LIVE);
		expect(await rows.count()).toBe(1);
		expect(await rows.first().locator("td").allTextContents()).toEqual(["1", "create_ticket", "pending", "—", "—", '{"title":"Disk full evil\\u202eexe.txt"}', "—"]);

		await call("POST", `/v1/jobs/${job.id}/approval`, tokens.operate, { decision: "approve" });
		await expect.poll(async () => (await getJob(job.id)).pending_approval?.input, LIVE).toEqual({ title: "Again" });
		await call("POST", `/v1/jobs/${job.id}/approval`, tokens.operate, { decision: "deny" });
		expect(await settled(job.id)).toBe("completed");
		await page.locator("#job-status .badge", { hasText: "completed" }).waitFor(LIVE);
		// Closed and opened again: read again, since the job was still running when it was read.
		await summary.click();
		await summary.click();
		await rows.nth(1).waitFor(LIVE);
		const [filed, denied] = await Promise.all([rows.nth(0).locator("td").allTextContents(), rows.nth(1).locator("td").allTextContents()]);
		// The e2e tool target answers 404: the call ran and failed, and the model was told so.
		expect(filed.slice(0, 3)).toEqual(["1", "create_ticket", "failed"]);
		expect(filed[3]).toMatch(/^approved by \S+$/);
		expect(filed[4]).toMatch(/^\d+ ms$|^\d+(\.\d)? s$/);
		expect(filed[6]).toContain("404");
		expect(denied.slice(0, 3)).toEqual(["2", "create_ticket", "denied"]);
		expect(denied[3]).toMatch(/^denied by \S+$/);
		expect(denied[5]).toBe('{"title":"Again"}');
		// Ended: closed and opened again, not read again.
		const reads: string[] = [];
		page.on("request", (r) => {
			if (r.url().includes(`/v1/jobs/${job.id}/tool-calls`)) reads.push(r.url());
		});
		await summary.click();
		await summary.click();
		expect(await rows.count()).toBe(2);
		expect(reads).toEqual([]);
		await shot(page, "job-tool-calls");
		// Beside its status, here and in the lists: completed, with its one call that ran failed.
		const facts = page.locator("#job-facts");
		await facts.getByText("1 ran, 1 failed (listed below)").waitFor(LIVE);
		expect(await toolCallsFact()).toBe("1 ran, 1 failed (listed below)");
		await page.goto(`${url}/jobs?agent=${agent}`);
		await page.locator(`tr[data-job="${job.id}"] .sub.warn`, { hasText: "1 of 1 tool call failed" }).waitFor(LIVE);
		await page.goto(`${url}/`);
		await page.locator("tr", { hasText: agent }).getByText("· 1 of 1 tool call failed").waitFor(LIVE);
		await page.close();
	});

	it("says a call that waited for approval in a job cancelled meanwhile was not run, not that it is pending", async () => {
		const agent = await createAgent(`dash-never-run-${run}`, { tools: [TICKET_TOOL] });
		await script({ tool_use: { name: "create_ticket", input: { title: "Never filed" } } });
		const job = await trigger(agent, "File it.");
		await expect.poll(async () => (await getJob(job.id)).status, LIVE).toBe("approval_pending");
		await call("POST", `/v1/jobs/${job.id}/cancel`, tokens.operate, { reason: "not now" });
		expect(await settled(job.id)).toBe("cancelled");
		const page = await signedIn(`/jobs/${job.id}`, tokens.read);
		await page.locator("#job-status .badge", { hasText: "cancelled" }).waitFor(LIVE);
		await page.locator("#job-tool-calls summary").click();
		const row = page.locator("#job-tool-calls-body tbody tr").first();
		await row.waitFor(LIVE);
		expect((await row.locator("td").allTextContents()).slice(0, 3)).toEqual(["1", "create_ticket", "not run, the job cancelled"]);
		await page.close();
	});

	it("words an indeterminate job's cut-off call as the CLI does, not as failed, in the jobs list", async () => {
		const listed = (id: string, status: string, made: number, failed: number) => ({
			id, agent: "cut-off", schedule: null, trigger_type: "manual", status, exit_reason: null, dispatch: null, scheduled_instant: null,
			created_at: "2026-01-01T00:00:00.000Z", started_at: "2026-01-01T00:00:01.000Z", finished_at: "2026-01-01T00:00:09.000Z",
			duration_seconds: 8, summary: null, revision: 3, tool_calls: { made, failed }, error: null,
		});
		const page = await signedIn("/incidents", tokens.read);
		await page.route(
			(u) => u.pathname === "/v1/jobs",
			(route) => route.fulfill({ json: { jobs: [listed("job-2026-01-01-cutoff", "indeterminate", 1, 1), listed("job-2026-01-01-failed", "completed", 2, 1)], next_cursor: null } }),
		);
		await page.goto(`${url}/jobs`);
		const sub = (id: string) => page.locator(`tr[data-job="${id}"] .sub.warn`);
		await sub("job-2026-01-01-cutoff").waitFor(LIVE);
		expect(await sub("job-2026-01-01-cutoff").textContent()).toBe("1 of 1 tool call cut off, effect unknown");
		expect(await sub("job-2026-01-01-failed").textContent()).toBe("1 of 2 tool calls failed");
		await page.close();
	});

	it("says in the jobs list what ended a failed job, as its page does, where a completed job shows its answer", async () => {
		const agent = await createAgent(`dash-why-failed-${run}`, {});
		await script({ error: 400, message: "prompt is too long for this model (emulated)" });
		const failed = await trigger(agent);
		expect(await settled(failed.id)).toBe("failed");
		await script({ text: "All quiet." });
		const done = await trigger(agent);
		expect(await settled(done.id)).toBe("completed");
		const { error } = await getJob(failed.id);
		// The list reads the index, which the agent feeds as the job ends: the record's type and message
		// (its request id is the record's alone).
		await expect.poll(async () => (await call<{ jobs: JobRecord[] }>("GET", `/v1/jobs?agent=${agent}`, tokens.read)).jobs.map((j) => j.error), LIVE).toEqual([null, { type: error!.type, message: error!.message }]);
		const page = await signedIn(`/jobs?agent=${agent}`, tokens.read);
		const cell = (id: string) => page.locator(`tr[data-job="${id}"] td.summary`);
		await cell(failed.id).waitFor(LIVE);
		expect(await cell(failed.id).textContent()).toBe(`${error!.type}: ${error!.message}`);
		expect(await cell(failed.id).getAttribute("title")).toBe(`${error!.type}: ${error!.message}`);
		// Coloured as an error is on the job's page, so it is not read as the job's answer.
		expect(await cell(failed.id).locator("div.ended-by").count()).toBe(1);
		expect(await cell(done.id).textContent()).toBe("All quiet.");
		expect(await cell(done.id).locator("div.ended-by").count()).toBe(0);
		await page.close();
	});

	it("says a duration under a second in milliseconds, in the jobs list, on the job's page and for its tool calls, and a longer one in seconds and minutes", async () => {
		const agent = await createAgent(`dash-ms-${run}`, { tools: [{ ...TICKET_TOOL, requires_approval: false }] });
		await script({ tool_use: { name: "create_ticket", input: { title: "Quick" } } }, { text: "Filed." });
		const quick = await trigger(agent, "File it.");
		expect(await settled(quick.id)).toBe("completed");
		await script({ text: "Nothing to file." });
		const slow = await trigger(agent, "Look.");
		expect(await settled(slow.id)).toBe("completed");
		await script({ text: "Nothing either." });
		const edge = await trigger(agent, "Look again.");
		expect(await settled(edge.id)).toBe("completed");
		// How long a job takes here is the machine's to say: the answers are given the durations of a
		// 27 ms job and tool call, of a 75 s job, and of one of 119.6 s (2 min once rounded, not "1 min 60 s").
		const durations: Record<string, number> = { [quick.id]: 0.027, [slow.id]: 75, [edge.id]: 119.6 };
		const edits: Record<string, (body: never) => void> = {
			"/v1/jobs": (page: { jobs: { id: string; duration_seconds: number | null }[] }) => {
				for (const j of page.jobs) if (j.id in durations) j.duration_seconds = durations[j.id]!;
			},
			[`/v1/jobs/${quick.id}`]: (job: { duration_seconds: number | null }) => {
				job.duration_seconds = durations[quick.id]!;
			},
			[`/v1/jobs/${quick.id}/tool-calls`]: (page: { tool_calls: { started_at: string | null; finished_at: string | null }[] }) => {
				for (const t of page.tool_calls) if (t.started_at) t.finished_at = new Date(Date.parse(t.started_at) + 27).toISOString();
			},
		};
		const page = await signedIn("/usage", tokens.read);
		await page.route(
			(u) => u.pathname in edits,
			async (route) => {
				const body = (await (await fetchWhole(route)).json()) as never;
				edits[new URL(route.request().url()).pathname]!(body);
				return route.fulfill({ json: body });
			},
		);

		await page.goto(`${url}/jobs?agent=${agent}`);
		const took = (id: string) => page.locator(`#jobs-table tr[data-job="${id}"] td.num`);
		await took(slow.id).waitFor(LIVE);
		expect(await took(quick.id).textContent()).toBe("27 ms");
		expect(await took(slow.id).textContent()).toBe("1 min 15 s");
		expect(await took(edge.id).textContent()).toBe("2 min");

		await page.goto(`${url}/jobs/${quick.id}`);
		await page.locator("#job-status .badge", { hasText: "completed" }).waitFor(LIVE);
		const facts = page.locator("#job-facts");
		const names = await facts.locator("dt").allTextContents();
		expect(await facts.locator("dd").nth(names.indexOf("Duration")).textContent()).toBe("27 ms");
		await page.locator("#job-tool-calls summary").click();
		const toolCall = page.locator("#job-tool-calls-body tbody tr").first();
		await toolCall.waitFor(LIVE);
		expect((await toolCall.locator("td").allTextContents())[4]).toBe("27 ms");
		await page.close();
	});

	it("shows an agent's persistent session above its runs, and forgets it from there", async () => {
		const agent = await createAgent(`dash-keeper-${run}`, { session: { mode: "persistent", idle_timeout: "24h" } });
		await script({ text: "Remembered." });
		const job = await trigger(agent, "Remember this.");
		expect(await settled(job.id)).toBe("completed");
		const { session_id: session } = await call<{ session_id: string }>("GET", `/v1/jobs/${job.id}`, tokens.read);

		const page = await signedIn(`/agents/${agent}/runs`);
		const panel = page.getByRole("region", { name: "Persistent session" });
		await panel.getByText(`Persistent session ${session}: its last run ${job.id} completed`).waitFor(LIVE);
		expect(await page.locator("#persistent-session-text").textContent()).toMatch(/ completed (just now|\d+ seconds? ago)\. The next run continues it\. It expires tomorrow\.$/);
		expect(await page.locator("#persistent-session-text time").count()).toBe(2);
		expect(await panel.getByRole("link", { name: job.id }).getAttribute("href")).toBe(`/jobs/${job.id}`);

		await page.locator("#persistent-session-reset").click();
		const ask = page.getByRole("dialog", { name: `Forget ${agent}'s session` });
		// A destructive confirmation starts on its dismiss button: one Enter forgets nothing.
		await ask.waitFor(LIVE);
		expect(await ask.getByRole("button", { name: "Cancel" }).evaluate((el) => el === (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement)).toBe(true);
		await ask.getByRole("button", { name: "Forget session" }).click();
		await ask.waitFor({ state: "hidden" });
		await panel.getByText("Persistent session: none yet. The next run starts one.").waitFor(LIVE);
		expect(await page.locator("#persistent-session-reset").isHidden()).toBe(true);
		expect((await call<{ session_id: string | null }>("GET", `/v1/agents/${agent}/sessions/current`, tokens.read)).session_id).toBeNull();
		await page.close();

		// The next run starts a new session. A read-only token sees it, without the button; an agent
		// whose runs start afresh shows no panel.
		await script({ text: "A new start." });
		const next = await trigger(agent, "Start again.");
		expect(await settled(next.id)).toBe("completed");
		const reader = await signedIn(`/agents/${agent}/runs`, tokens.read);
		await reader.getByRole("region", { name: "Persistent session" }).getByText(`Persistent session ses-${next.id}: its last run ${next.id} completed`).waitFor(LIVE);
		expect(await reader.locator("#persistent-session-reset").isVisible()).toBe(false);
		await reader.goto(`${url}/agents/triage/runs`);
		await reader.locator("#view").waitFor({ state: "visible" });
		await reader.locator("#runs-meta", { hasText: /occurrence/ }).waitFor(LIVE);
		expect(await reader.locator("#persistent-session").isHidden()).toBe(true);
		await reader.close();
	});

	it("lists jobs at once whatever the agents' list takes, and suggests a large fleet's agents by the start typed", async () => {
		// A job for the list to show.
		await completedJob(`dash-listed-${run}`);
		const page = await signedIn("/incidents", tokens.read);
		const { hold, requests } = await fakeFleet(page, 2516);
		// The fleet's first page does not answer until released.
		const held = hold();
		await page.goto(`${url}/jobs`);
		await page.locator("#view").waitFor({ state: "visible" });
		await page.locator("#jobs-meta", { hasText: /jobs?$|more older$/ }).waitFor(LIVE);
		expect(await page.locator("#jobs-table tbody tr").count()).toBeGreaterThan(0);
		// Its suggestions: a page of names, then those starting with what is typed (the last by name too).
		const agent = page.locator("#jobs-filter input[name=agent]");
		await agent.focus();
		await (await held)();
		await expect.poll(() => page.locator("#jobs-agents option").count(), LIVE).toBe(200);
		await agent.fill("tri");
		await expect.poll(() => page.locator(`#jobs-agents option[value="triage"]`).count(), LIVE).toBe(1);
		expect(await page.locator("#jobs-agents option").count()).toBe(1);
		expect(requests.map((u) => u.searchParams.get("prefix"))).toEqual([null, "tri"]);
		expect(requests.every((u) => u.searchParams.get("limit") === "200" && u.searchParams.get("view") === "names")).toBe(true);
		// Any name filters, on Enter: one with no jobs lists none.
		await agent.fill("fleet-2514");
		await agent.press("Enter");
		await page.locator("#jobs-empty").waitFor({ state: "visible", ...LIVE });
		expect(new URL(page.url()).searchParams.get("agent")).toBe("fleet-2514");
		expect(await page.locator("#jobs-table tbody tr").count()).toBe(0);
		await page.close();
	});

	it("reads one page of names for the agent filter's suggestions, not the whole fleet's: 1 request for 1,000 agents, not 5", async () => {
		const page = await signedIn("/incidents", tokens.read);
		const { requests, served } = await fakeFleet(page, 1000);
		await page.goto(`${url}/jobs`);
		await page.locator("#view").waitFor({ state: "visible" });
		const agent = page.locator("#jobs-filter input[name=agent]");
		await agent.focus();
		await expect.poll(() => page.locator("#jobs-agents option").count(), LIVE).toBe(200);
		// view=names: no agent's object asked for its state (the full list's calls), and a few KB.
		expect(requests.map((u) => u.searchParams.get("view"))).toEqual(["names"]);
		// A start typed: its names alone, fleet-0900 to fleet-0998 (fleet-0999 is triage).
		await agent.fill("fleet-09");
		await expect.poll(() => page.locator("#jobs-agents option").count(), LIVE).toBe(99);
		expect(await page.locator(`#jobs-agents option[value="fleet-0900"]`).count()).toBe(1);
		expect(requests.map((u) => u.searchParams.get("prefix"))).toEqual([null, "fleet-09"]);
		console.log(`agent filter suggestions of 1,000 agents: ${requests.length} requests, ${served.bytes} B`);
		expect(served.bytes).toBeLessThan(15_000);
		await page.close();
	});

	it("does not page a filter just typed with the cursor of the list before it", async () => {
		// A real job's list record, which the made-up ones copy.
		const { agent: model } = await completedJob(`dash-cursor-${run}`);
		const { jobs: [real] } = await call<{ jobs: Record<string, unknown>[] }>("GET", `/v1/jobs?agent=${model}&limit=1`, tokens.read);
		const page = await signedIn("/jobs", tokens.read);
		const fake = (agent: string, i: number) => ({ ...real!, id: `job-2026-01-01-${String(i).padStart(6, "a")}`, agent });
		const asked: string[] = [];
		// Cursors belong to their filters, as the API's do: the unfiltered list's, sent with an agent, is a 400.
		await page.route(
			(u) => u.pathname === "/v1/jobs",
			(route) => {
				const q = new URL(route.request().url()).searchParams;
				asked.push(q.toString());
				if (q.get("agent") && q.get("cursor")) return route.fulfill({ status: 400, json: { error: { code: "bad_request", message: "cursor belongs to another list or to other filters" } } });
				if (q.get("agent")) return route.fulfill({ json: { jobs: [fake(q.get("agent")!, 0)], next_cursor: null } });
				return route.fulfill({ json: { jobs: Array.from({ length: 25 }, (_, i) => fake("other", i)), next_cursor: q.get("cursor") ? null : "after-all" } });
			},
		);
		await page.reload();
		await page.locator("#jobs-table tbody tr").nth(24).waitFor(LIVE);
		// A name typed, then "Older" clicked at once: leaving the field applies the filter first.
		await page.locator("#jobs-filter input[name=agent]").fill("only-me");
		await page.locator("#jobs-older").click();
		await expect.poll(() => page.locator("#jobs-table tbody tr").count(), LIVE).toBe(1);
		expect(asked.filter((q) => q.includes("agent=only-me"))).toEqual(["agent=only-me&limit=25"]);
		expect(await page.locator("#notice").textContent()).not.toContain("cursor");
		await page.close();
	});

	it("draws the runs of an agent as a timeline after a few ticks: on time, late, skipped with its reason, failed", async () => {
		expect(await emulatorQueued()).toBe(0);
		const agent = await createAgent(`dash-runs-${run}`, {
			max_concurrent: 5,
			schedules: {
				"every-minute": { interval: "1m", catch_up: false },
				"every-2m": { interval: "2m" },
				"every-5m": { interval: "5m", catch_up: true },
			},
		});
		// Ticks in the recent past (slots come from the tick's time), so no cursor is pushed into the
		// future; all within one quarter hour, so no slot of fleet.yaml's schedules (every 15 minutes,
		// on the hour) falls among them and only this agent's jobs call the model.
		const q = Math.floor(Date.now() / 1_800_000) * 1_800_000 - 1_800_000;
		const jobsOf = async () => (await call<{ jobs: JobRecord[] }>("GET", `/v1/jobs?agent=${agent}&limit=50`, tokens.read)).jobs;
		// Each tick's jobs finish before the next tick, so none is refused for capacity.
		const tickAndSettle = async (at: number, jobs: number) => {
			await tick(at);
			await expect.poll(async () => (await jobsOf()).map((j) => j.status), LIVE).toSatisfy((s: string[]) => s.length === jobs && s.every((x) => FINAL.includes(x)));
		};
		await script({ error: 400, message: "the model refused the request (emulated)" });
		await tickAndSettle(q + 2 * 60_000, 2); // on time, both (one fails: the scripted 400)
		await tickAndSettle(q + 3 * 60_000, 3); // on time
		await tickAndSettle(q + 7 * 60_000 + 45_000, 6); // every-2m's 6-minute slot 105 s late; every-5m's 5-minute slot past its grace: caught up
		await tickAndSettle(q + 13 * 60_000, 9); // on time, late, caught up; the slots in between skipped (superseded)

		const page = await signedIn(`/agents/${agent}/runs`);
		await page.locator("#runs-chart svg.runs-timeline").waitFor(LIVE);
		const classes = await page.locator("#runs-chart g.occurrence").evaluateAll((gs) => gs.map((g) => g.getAttribute("data-class")));
		expect(classes.length).toBeGreaterThanOrEqual(6);
		for (const c of ["on-time", "late", "skipped", "catch-up", "failed"]) expect(classes, c).toContain(c);
		// A skipped mark's tooltip says why, in the ledger's words.
		const skipped = page.locator("#runs-chart g.occurrence[data-class=skipped]").first();
		const runId = await skipped.getAttribute("data-run");
		const { runs } = await call<{ runs: { id: string; skip_reason: string | null }[] }>("GET", `/v1/agents/${agent}/runs?limit=200`, tokens.read);
		const reason = runs.find((r) => r.id === runId)?.skip_reason;
		expect(reason).toBeTruthy();
		expect(await skipped.locator("title").textContent()).toContain(reason);
		expect(await page.locator("#runs-table tbody tr").count()).toBe(classes.length);
		await shot(page, "runs");
		await page.close();

		// The fleet says each schedule's last run as the agent view has it: its slot and what became of it.
		const view = await call<{ schedules: { name: string; last_run: { status: string; skip_reason: string | null } | null }[] }>("GET", `/v1/agents/${agent}`, tokens.read);
		const fleet = await signedIn("/");
		const row = fleet.locator(`#fleet-table tr[data-agent="${agent}"]`);
		await row.waitFor(LIVE);
		const lines = await row.locator("td").nth(2).locator("li").evaluateAll((lis) => lis.map((li) => li.querySelector("div.sub")?.textContent ?? null));
		expect(lines).toHaveLength(3);
		for (const [i, s] of view.schedules.entries()) {
			expect(s.last_run, s.name).not.toBeNull();
			expect(lines[i], s.name).toMatch(new RegExp(`^last \\d+ \\w+, [\\d:]+ \\S+ ${s.last_run!.status}`));
			if (s.last_run!.skip_reason) expect(lines[i]).toContain(s.last_run!.skip_reason);
		}
		await fleet.close();
	});

	it("polls an agent's runs page only once the last load has finished: a slow answer delays the next poll, which shows the newer occurrences", async () => {
		const agent = await createAgent(`dash-runs-poll-${run}`, { schedules: { "every-minute": { interval: "1m" } } });
		// Minutes 8 and 9 of the same past half hour as the test above: its agent's cursor is past them
		// (so they claim nothing of its) and no fleet.yaml slot falls on them.
		const q = Math.floor(Date.now() / 1_800_000) * 1_800_000 - 1_800_000;
		const runsOf = async () => (await call<{ runs: unknown[] }>("GET", `/v1/agents/${agent}/runs?limit=50`, tokens.read)).runs.length;
		await tick(q + 8 * 60_000);
		await expect.poll(runsOf, LIVE).toBe(1);

		const page = await signedIn(`/agents/${agent}/runs`, tokens.read, { fakeClock: true });
		const rows = page.locator("#runs-table tbody tr");
		await expect.poll(() => rows.count(), LIVE).toBe(1);
		// How many occurrences each redraw shows, in order. (A string: no DOM types in this project.)
		await page.evaluate(`
			window.runCounts = [];
			new MutationObserver(() => window.runCounts.push(document.querySelectorAll("#runs-table tbody tr").length))
				.observe(document.querySelector("#runs-table tbody"), { childList: true });
		`);
		const counts = () => page.evaluate<number[]>("window.runCounts");
		const polls = await watchTimers(page, 10_000);
		const reads: string[] = [];
		page.on("request", (r) => {
			if (new URL(r.url()).pathname === `/v1/agents/${agent}/runs`) reads.push(r.url());
		});

		// The first 10 s poll's answer is held: it was read before the next tick, so it shows one.
		const { held: pollHeld } = await holdFirst(page, (u) => u.pathname === `/v1/agents/${agent}/runs`, (body: { runs: unknown[] }) => body.runs.length);
		await page.clock.runFor(10_000);
		const held = await pollHeld;
		expect(held.value).toBe(1);
		await tick(q + 9 * 60_000);
		await expect.poll(runsOf, LIVE).toBe(2);
		// While it is unanswered, no other poll starts.
		await page.clock.runFor(45_000);
		expect(await polls()).toBe(0);
		expect(reads).toHaveLength(1);

		await held.release();
		// It draws what it read (one occurrence: its row is kept where it has not changed); the next
		// poll is set only now, and shows the tick's occurrence.
		await expect.poll(polls, LIVE).toBe(1);
		expect(await rows.count()).toBe(1);
		expect((await counts()).every((n) => n === 1)).toBe(true);
		await page.clock.runFor(10_000);
		await expect.poll(() => rows.count(), LIVE).toBe(2);
		expect((await counts()).at(-1)).toBe(2);
		await page.close();
		// The runs' jobs end here (the second run is skipped if the first was still running), so none is
		// left to take a model answer a later test scripts.
		const { runs } = await call<{ runs: { job_id: string | null }[] }>("GET", `/v1/agents/${agent}/runs?limit=50`, tokens.read);
		for (const { job_id } of runs.filter((r) => r.job_id !== null)) {
			await expect.poll(async () => (await call<JobRecord>("GET", `/v1/jobs/${job_id}`, tokens.read)).status, LIVE).toSatisfy((s: string) => FINAL.includes(s));
		}
	});

	it("says each run's dispatch in the runs table, as `drover runs` does, a failed, skipped or unknown run's too", async () => {
		expect(await emulatorQueued()).toBe(0);
		const agent = await createAgent(`dash-dispatch-${run}`, {});
		await script({ error: 400, message: "the model refused the request (emulated)" });
		const job = await trigger(agent);
		expect(await settled(job.id)).toBe("failed");
		const page = await signedIn(`/agents/${agent}/runs`, tokens.read);
		const row = page.locator("#runs-table tbody tr", { has: page.locator(`a[href="/jobs/${job.id}"]`) });
		await row.waitFor(LIVE);
		const headers = await page.locator("#runs-table thead th").allTextContents();
		const dispatchCell = (r: ReturnType<Page["locator"]>) => r.locator("td").nth(headers.indexOf("Dispatch"));
		const { runs: [ledger] } = await call<{ runs: { dispatch: string; status: string }[] }>("GET", `/v1/agents/${agent}/runs`, tokens.read);
		expect(ledger).toMatchObject({ dispatch: "manual", status: "failed" });
		expect((await dispatchCell(row).textContent())?.trim()).toBe("manual");
		// Marked with the legend's shape for its class (circle on time, square manual), not a square for each.
		const markOf = (at: ReturnType<Page["locator"]>) => at.locator("path").evaluate((el) => `${el.getAttribute("class")} ${el.getAttribute("d")}`);
		const legendMark = (p: Page, cls: string) => markOf(p.locator(".legend li", { has: p.locator(`path.mark.run-${cls}`) }));
		expect(await markOf(dispatchCell(row))).toBe(await legendMark(page, "manual"));
		expect(await row.locator("td").nth(headers.indexOf("Status")).textContent()).toBe("failed");
		await page.close();

		// The ledger's other dispatches, under a status that is not completed.
		const at = (i: number) => new Date(Date.UTC(2020, 0, 1, 0, i * 15)).toISOString();
		const kinds: [string, string, string][] = [["on_time", "failed", "on time"], ["late", "skipped", "late"], ["catch_up", "unknown", "catch-up"], ["manual", "failed", "manual"]];
		const runs = kinds.map(([dispatch, status], i) => ({
			id: `occ-${i}`, schedule: dispatch === "manual" ? null : "every-15m", source: dispatch === "manual" ? "webhook" : "cron", scheduled_instant: dispatch === "manual" ? null : at(10 - i),
			dispatch, claimed_at: at(10 - i), status, skip_reason: status === "skipped" ? "paused" : null, skipped_count: null, skipped_from: null, job_id: null, error: null, delivery_outcome: null,
		}));
		const faked = await context.newPage();
		await faked.route((u) => u.pathname === `/v1/agents/${agent}/runs`, (route) => route.fulfill({ json: { runs, next_cursor: null } }));
		await signInOn(faked, `/agents/${agent}/runs`, tokens.read);
		const rows = faked.locator("#runs-table tbody tr");
		await expect.poll(() => rows.count(), LIVE).toBe(kinds.length);
		for (const [i, [dispatch, , words]] of kinds.entries()) {
			const r = faked.locator(`#runs-table tbody tr[data-run="occ-${i}"]`);
			expect((await dispatchCell(r).textContent())?.trim(), dispatch).toBe(words);
			expect(await markOf(dispatchCell(r)), dispatch).toBe(await legendMark(faked, dispatch.replace("_", "-")));
		}
		await faked.close();
	});

	it("shows each run's delivery outcome in the runs table, badged as the statuses are, a dash where there is none, on a phone too", async () => {
		expect(await emulatorQueued()).toBe(0);
		// Delivered to the emulator's sink (200); later to the tickets URL, which answers 404: failed.
		const agent = await createAgent(`dash-delivery-${run}`, { delivery: { type: "webhook", url_secret: "DIGEST_SLACK_WEBHOOK_URL" } });
		const outcome = async (id: string) => (await call<{ delivery: { outcome: string } | null }>("GET", `/v1/jobs/${id}`, tokens.read)).delivery?.outcome ?? null;
		const runJob = async (answer: unknown, status: string, delivery: string | null) => {
			await script(answer);
			const job = await trigger(agent);
			expect(await settled(job.id)).toBe(status);
			if (delivery) await expect.poll(() => outcome(job.id), LIVE).toBe(delivery);
			return job.id;
		};
		const delivered = await runJob({ text: "All quiet." }, "completed", "delivered");
		const silent = await runJob({ text: "[SILENT]" }, "completed", "suppressed");
		const none = await runJob({ error: 400, message: "the model refused the request (emulated)" }, "failed", null);
		await call("PUT", `/v1/agents/${agent}`, tokens.admin, { name: agent, prompt: "Do the thing.", timeout: "5m", delivery: { type: "webhook", url_secret: "E2E_TICKETS_URL" } });
		const refused = await runJob({ text: "Nobody will read this." }, "completed", "failed");

		const page = await signedIn(`/agents/${agent}/runs`, tokens.read);
		const rows = page.locator("#runs-table tbody tr");
		await expect.poll(() => rows.count(), LIVE).toBe(4);
		const headers = await page.locator("#runs-table thead th").allTextContents();
		const column = headers.indexOf("Delivery");
		expect(column).toBeGreaterThan(headers.indexOf("Job"));
		/** The row of the job's run: its Status and Delivery cells. */
		const cells = (id: string) => {
			const row = page.locator("#runs-table tbody tr", { has: page.locator(`a[href="/jobs/${id}"]`) });
			return { status: row.locator("td").nth(headers.indexOf("Status")), delivery: row.locator("td").nth(column) };
		};
		for (const [id, text] of [[delivered, "delivered"], [silent, "suppressed"], [refused, "failed"]] as const) {
			expect(await cells(id).delivery.locator(".badge").textContent(), text).toBe(text);
		}
		// No delivery target reached (the job failed): a dash, no badge.
		expect(await cells(none).delivery.textContent()).toBe("—");
		expect(await cells(none).delivery.locator(".badge").count()).toBe(0);
		// The timeline's tooltips say it too, after the job, and so do its marks' names; none where there is none.
		const mark = (id: string) => page.locator(`#runs-chart a[href="/jobs/${id}"]`);
		for (const [id, text] of [[delivered, "delivered"], [silent, "suppressed"], [refused, "failed"]] as const) {
			expect(await mark(id).locator("title").textContent(), text).toMatch(new RegExp(`\\njob ${id}\\ndelivery ${text}$`));
			// (Named by its job first, and once.)
			expect(await mark(id).getAttribute("aria-label"), text).toMatch(new RegExp(`^job ${id} · (?!.*job-).* · delivery ${text}$`));
		}
		expect(await mark(none).locator("title").textContent()).toMatch(new RegExp(`\\njob ${none}$`));
		expect(await mark(none).locator("title").textContent()).not.toContain("delivery");
		// Coloured as the statuses are: delivered as completed, failed as failed.
		// (The page's getComputedStyle, typed here: no DOM types in this project.)
		const background = (badge: ReturnType<Page["locator"]>) =>
			badge.evaluate((el) => (globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }).getComputedStyle(el).backgroundColor);
		expect(await background(cells(delivered).delivery.locator(".badge"))).toBe(await background(cells(delivered).status.locator(".badge")));
		expect(await background(cells(refused).delivery.locator(".badge"))).toBe(await background(cells(none).status.locator(".badge")));
		expect(await background(cells(refused).delivery.locator(".badge"))).not.toBe(await background(cells(delivered).delivery.locator(".badge")));

		// On a phone the table scrolls in its own box, and the badge stays on one line, as the status's does.
		await page.setViewportSize({ width: 375, height: 800 });
		const badge = cells(silent).delivery.locator(".badge");
		expect((await badge.boundingBox())!.height).toBe((await cells(silent).status.locator(".badge").boundingBox())!.height);
		expect(await page.evaluate<boolean>("document.documentElement.scrollWidth <= window.innerWidth")).toBe(true);
		// The job's page says why its delivery failed, as its last attempt met it.
		await page.goto(`${url}/jobs/${refused}`);
		await page.locator("#job-delivery .badge", { hasText: "failed" }).waitFor(LIVE);
		expect(await page.locator("#job-delivery").textContent()).toBe("failed to webhook: delivery target answered 404; 1 attempt");
		// One that got through (or was suppressed) has no reason to give, and says nothing after its target.
		for (const [id, text] of [[delivered, "delivered"], [silent, "suppressed"]] as const) {
			await page.goto(`${url}/jobs/${id}`);
			await page.locator("#job-delivery .badge", { hasText: text }).waitFor(LIVE);
			expect(await page.locator("#job-delivery").textContent()).toBe(`${text} to webhook`);
		}
		await page.close();
	});

	it("shows a job's hook calls on its page, each with what became of it, and no Hooks where there were none", async () => {
		// after_run to the emulator's sink (200); on_error to the tickets URL, which answers 404: given up at once.
		const agent = await createAgent(`dash-hooks-${run}`, { hooks: { after_run: [{ url_secret: "DIGEST_SLACK_WEBHOOK_URL" }], on_error: [{ url_secret: "E2E_TICKETS_URL" }] } });
		await script({ error: 400, message: "the model refused the request (emulated)" });
		const job = await trigger(agent);
		expect(await settled(job.id)).toBe("failed");
		const outcomes = async () => (await call<{ hooks: { outcome: string }[] }>("GET", `/v1/jobs/${job.id}`, tokens.read)).hooks.map((k) => k.outcome);
		await expect.poll(outcomes, LIVE).toEqual(["delivered", "failed"]);
		const page = await signedIn(`/jobs/${job.id}`, tokens.read);
		const items = page.locator("#job-hooks li");
		await expect.poll(() => items.allTextContents(), LIVE).toEqual(["delivered after_run to DIGEST_SLACK_WEBHOOK_URL", "failed on_error to E2E_TICKETS_URL · 1 attempt: hook target answered 404"]);
		expect(await page.locator("#job-hooks h3").textContent()).toBe("Hooks");
		// An agent without hooks: the job's page has no Hooks.
		const plain = await createAgent(`dash-nohooks-${run}`, {});
		await script({ text: "Fine." });
		const quiet = await trigger(plain);
		expect(await settled(quiet.id)).toBe("completed");
		await page.goto(`${url}/jobs/${quiet.id}`);
		await page.locator("#job-delivery").filter({ hasText: /\S/ }).waitFor(LIVE);
		expect(await page.locator("#job-hooks").isHidden()).toBe(true);
		await page.close();
	});

	it("says a hook call held for the job's delivery waits for it, and no attempt count for a call never sent", async () => {
		const { job } = await completedJob(`dash-hooks-held-${run}`);
		// As the API answers while the job's delivery is retried (job-hooks.test drives it for real): a
		// call held for it, one queued and not sent yet, and one given up with nothing sent (its secret unset).
		const page = await open(`/jobs/${job.id}`);
		await page.route((u) => u.pathname === `/v1/jobs/${job.id}`, async (route) => {
			const response = await fetchWhole(route);
			const body = (await response.json()) as { hooks: Record<string, unknown>[] };
			body.hooks = [
				{ hook: "after_run", url_secret: "AUDIT_URL", outcome: "pending", attempts: 0, waiting_for: "delivery" },
				{ hook: "after_run", url_secret: "LOG_URL", outcome: "pending", attempts: 0 },
				{ hook: "after_run", url_secret: "GONE_URL", outcome: "failed", attempts: 0, error: "secret GONE_URL is not set" },
			];
			await route.fulfill({ response, json: body });
		});
		await signInOn(page, `/jobs/${job.id}`, tokens.read);
		const items = page.locator("#job-hooks li");
		await expect.poll(() => items.allTextContents(), LIVE).toEqual([
			"pending after_run to AUDIT_URL · waiting for the job's delivery",
			"pending after_run to LOG_URL · not sent yet",
			"failed after_run to GONE_URL · nothing sent: secret GONE_URL is not set",
		]);
		await page.unrouteAll({ behavior: "wait" });
		await page.close();
	});

	it("reads an ended job's record again while a hook call is still being sent, and no more once none is", async () => {
		const agent = await createAgent(`dash-hooks-live-${run}`, { hooks: { after_run: [{ url_secret: "DIGEST_SLACK_WEBHOOK_URL" }] } });
		await script({ text: "Fine." });
		const job = await trigger(agent);
		expect(await settled(job.id)).toBe("completed");
		await expect.poll(async () => (await call<{ hooks: { outcome: string }[] }>("GET", `/v1/jobs/${job.id}`, tokens.read)).hooks.map((k) => k.outcome), LIVE).toEqual(["delivered"]);
		// As a page open when the job ended reads it: its call, sent after the job's end, being retried.
		let retried = true;
		let reads = 0;
		const page = await open(`/jobs/${job.id}`, { fakeClock: true });
		await page.route((u) => u.pathname === `/v1/jobs/${job.id}`, async (route) => {
			const response = await fetchWhole(route);
			const body = (await response.json()) as { hooks: Record<string, unknown>[] };
			reads++;
			if (retried) body.hooks = body.hooks.map((k) => ({ ...k, outcome: "pending", attempts: 1, error: "hook target answered 503", next_attempt_at: new Date(Date.now() + 5_000).toISOString() }));
			await route.fulfill({ response, json: body });
		});
		// The job's stream ends with the job, before its hook calls do: kept away here, so that the
		// record is read again by the page's own timing alone, not at a stream's end that raced the test.
		await page.route((u) => u.pathname === `/v1/jobs/${job.id}/stream`, (route) => route.fulfill({ status: 503, json: { error: { code: "unavailable", message: "kept away by the test" } } }));
		await signInOn(page, `/jobs/${job.id}`, tokens.read);
		await viewReady(page);
		const items = page.locator("#job-hooks li");
		await items.filter({ hasText: /^pending after_run to DIGEST_SLACK_WEBHOOK_URL · 1 attempt: hook target answered 503 · next / }).waitFor(LIVE);
		retried = false;
		await stepClock(page, 10_000);
		await expect.poll(() => items.allTextContents(), LIVE).toEqual(["delivered after_run to DIGEST_SLACK_WEBHOOK_URL"]);
		// Nothing left to send: the record is not read again.
		const read = reads;
		await stepClock(page, 10_000);
		await stepClock(page, 10_000);
		expect(reads).toBe(read);
		await page.unrouteAll({ behavior: "wait" });
		await page.close();
	});

	it("lists incidents and closes one", async () => {
		const agent = await createAgent(`dash-fail-${run}`, {});
		await script({ error: 400, message: "prompt is too long for this model (emulated)" });
		const job = await trigger(agent);
		expect(await settled(job.id)).toBe("failed");
		const page = await signedIn("/incidents?state=detected");
		const row = page.locator("#incidents-table tbody tr", { hasText: agent });
		await row.waitFor(LIVE);
		expect(await row.locator(".badge").textContent()).toBe("detected");
		expect(await row.textContent()).toContain(job.id);
		// What it waits on to run clean: the failed run was a manual trigger.
		expect(await row.locator(".sub", { hasText: "failing:" }).textContent()).toBe("failing: manual");
		await shot(page, "incidents");
		// Close asks first: Escape closes nothing; a refusal is said in the dialog, escaped, and it stays
		// open; yes closes it.
		const closes: string[] = [];
		page.on("request", (r) => {
			if (r.method() === "POST" && r.url().includes("/v1/incidents/")) closes.push(new URL(r.url()).pathname);
		});
		const incident = (await row.getAttribute("data-incident"))!;
		const ask = page.getByRole("dialog", { name: `Close incident ${incident}` });
		const yes = ask.getByRole("button", { name: "Close incident" });
		await row.locator("button", { hasText: "Close" }).click();
		await ask.waitFor();
		expect(await ask.textContent()).toContain("The same error will not open it again.");
		await page.keyboard.press("Escape");
		await ask.waitFor({ state: "hidden" });
		expect(closes).toEqual([]);
		await page.route((u) => u.pathname === `/v1/incidents/${incident}/close`, (route) => route.fulfill({ status: 404, json: { error: { code: "not_found", message: "no incident \u001b[31mthere" } } }), { times: 1 });
		await row.locator("button", { hasText: "Close" }).click();
		await yes.click();
		await ask.getByRole("alert").filter({ hasText: "no incident \\x1b[31mthere" }).waitFor(LIVE);
		expect(await row.locator(".badge").textContent()).toBe("detected");
		await yes.click();
		// It leaves the "detected" list, and shows as closed under "closed".
		await row.waitFor({ state: "detached", ...LIVE });
		await ask.waitFor({ state: "hidden" });
		expect(closes).toEqual([`/v1/incidents/${incident}/close`, `/v1/incidents/${incident}/close`]);
		await page.locator("#notice", { hasText: `Closed ${incident}` }).waitFor(LIVE);
		await page.locator("#incidents-filter select[name=state]").selectOption("closed");
		await page.locator("#incidents-table tbody tr", { hasText: agent }).locator(".badge", { hasText: "closed" }).waitFor(LIVE);
		await page.close();
	});

	it("says an incident another operator closed after the row was drawn was already closed, by whom, not that this press closed it", async () => {
		const agent = await createAgent(`dash-closed-${run}`, {});
		await script({ error: 400, message: "prompt is too long for this model (emulated)" });
		expect(await settled((await trigger(agent)).id)).toBe("failed");
		const page = await signedIn(`/incidents?agent=${agent}`);
		const row = page.locator("#incidents-table tbody tr", { hasText: agent });
		await row.locator(".badge", { hasText: "detected" }).waitFor(LIVE);
		await page.locator("#whoami", { hasText: "operator" }).waitFor(LIVE);
		const incident = (await row.getAttribute("data-incident"))!;
		// Another operator (the admin token, named root) closes it meanwhile.
		expect((await call<{ closed_by: string }>("POST", `/v1/incidents/${incident}/close`, tokens.admin)).closed_by).toBe("root");
		await row.getByRole("button", { name: `Close incident ${incident}` }).click();
		await page.getByRole("dialog", { name: `Close incident ${incident}` }).getByRole("button", { name: "Close incident" }).click();
		await page.locator("#notice", { hasText: new RegExp(`^Already closed: ${incident} was closed by root, [^;]+ UTC; nothing changed`) }).waitFor(LIVE);
		const closed = await call<{ incidents: { closed_by: string }[] }>("GET", `/v1/incidents?agent=${agent}&state=closed`, tokens.read);
		expect(closed.incidents.map((i) => i.closed_by)).toEqual(["root"]);
		await page.close();
	});

	it("resolves an open incident by the operator's word, asking first, says one answered still open (failed again since the row was shown) so, and offers it for no resolved or closed one", async () => {
		const agent = await createAgent(`dash-res-${run}`, {});
		await script({ error: 400, message: "prompt is too long for this model (emulated)" });
		expect(await settled((await trigger(agent)).id)).toBe("failed");
		const page = await signedIn(`/incidents?agent=${agent}`);
		const row = page.locator("#incidents-table tbody tr", { hasText: agent });
		await row.locator(".badge", { hasText: "detected" }).waitFor(LIVE);
		const incident = (await row.getAttribute("data-incident"))!;
		const ask = page.getByRole("dialog", { name: `Resolve incident ${incident}` });
		await row.getByRole("button", { name: `Resolve incident ${incident}` }).click();
		await ask.waitFor();
		expect(await ask.textContent()).toContain("The same error will open it again, and page.");
		// Failed again while the operator was asked (the row they saw counted 1): the resolve names that
		// count, and is answered open, which the notice says rather than "Resolved".
		await script({ error: 400, message: "prompt is too long for this model (emulated)" });
		expect(await settled((await trigger(agent)).id)).toBe("failed");
		const sent = page.waitForRequest((r) => r.url().endsWith(`/v1/incidents/${incident}/resolve`));
		await ask.getByRole("button", { name: "Resolve incident" }).click();
		expect((await sent).postDataJSON()).toEqual({ count: 1 });
		await ask.waitFor({ state: "hidden", ...LIVE });
		await page.locator("#notice", { hasText: `Still open: ${incident} failed again since it was shown (×2, last ` }).waitFor(LIVE);
		expect(await page.locator("#notice").textContent()).not.toContain(`Resolved ${incident}`);
		await row.locator(".badge", { hasText: "detected" }).waitFor(LIVE);
		await row.getByRole("button", { name: `Resolve incident ${incident}` }).click();
		await ask.getByRole("button", { name: "Resolve incident" }).click();
		await ask.waitFor({ state: "hidden", ...LIVE });
		await page.locator("#notice", { hasText: `Resolved ${incident}` }).waitFor(LIVE);
		await row.locator(".badge", { hasText: "resolved" }).waitFor(LIVE);
		expect(await call<{ incidents: { id: string; state: string }[] }>("GET", `/v1/incidents?agent=${agent}`, tokens.read)).toMatchObject({ incidents: [{ id: incident, state: "resolved" }] });
		// Resolved: only Close is left; closed: neither.
		expect(await row.getByRole("button").allTextContents()).toEqual(["Close"]);
		await call("POST", `/v1/incidents/${incident}/close`, tokens.operate);
		await page.reload();
		await row.locator(".badge", { hasText: "closed" }).waitFor(LIVE);
		expect(await row.getByRole("button").count()).toBe(0);
		await page.close();
	});

	it("shows the incidents of the state last chosen when an earlier choice's answer lands after it", async () => {
		const [closedAgent, openAgent] = [await createAgent(`dash-inc-c-${run}`, {}), await createAgent(`dash-inc-o-${run}`, {})];
		for (const agent of [closedAgent, openAgent]) {
			await script({ error: 400, message: "prompt is too long for this model (emulated)" });
			expect(await settled((await trigger(agent)).id)).toBe("failed");
		}
		const { incidents } = await call<{ incidents: { id: string }[] }>("GET", `/v1/incidents?agent=${closedAgent}`, tokens.read);
		expect(incidents).toHaveLength(1);
		for (const { id } of incidents) await call("POST", `/v1/incidents/${id}/close`, tokens.operate);

		const page = await signedIn("/incidents?state=detected");
		await page.locator("#incidents-table tbody tr", { hasText: openAgent }).waitFor(LIVE);
		// The states of these two agents' incidents at each redraw of the table, in order (a string:
		// this project's TypeScript has no DOM types; the page runs it as is).
		await page.evaluate(`
			window.incidentDraws = [];
			const mine = ${JSON.stringify([closedAgent, openAgent])};
			const tbody = document.querySelector("#incidents-table tbody");
			new MutationObserver(() => {
				const rows = Array.from(tbody.querySelectorAll("tr")).filter((tr) => mine.includes(tr.cells[1] && tr.cells[1].textContent));
				window.incidentDraws.push(rows.map((tr) => tr.querySelector(".badge").textContent).sort().join(","));
			}).observe(tbody, { childList: true });
		`);
		const draws = () => page.evaluate<string[]>("window.incidentDraws");
		const select = page.locator("#incidents-filter select[name=state]");

		const { held: closedHeld } = await holdFirst(
			page,
			(u) => u.pathname === "/v1/incidents" && u.searchParams.get("state") === "closed",
			(body: { incidents: { agent: string }[] }) => body.incidents.map((i) => i.agent),
		);
		await select.selectOption("closed");
		const held = await closedHeld;
		expect(held.value).toContain(closedAgent);
		// The detected incidents again: the rows shown are kept as they are (no redraw) unless they changed.
		// Its answer is a 304 now (the page sends the tag of the detected list it drew first), which Chromium
		// ends as failed (ERR_ABORTED: no body to read) once the page has it: either event says it has.
		const detected = new Promise<void>((resolve) => {
			const done = (r: Request) => void (new URL(r.url()).searchParams.get("state") === "detected" && resolve());
			page.on("requestfinished", done);
			page.on("requestfailed", done);
		});
		await select.selectOption("detected");
		await detected;
		await expect.poll(() => page.locator("#incidents-table tbody tr", { hasText: openAgent }).count(), LIVE).toBe(1);

		await held.release();
		// Any state next: a redraw after the held answer has reached the page, showing both incidents.
		await select.selectOption("");
		await page.locator("#incidents-table tbody tr", { hasText: closedAgent }).waitFor(LIVE);
		const seen = await draws();
		expect(seen.at(-1)).toBe("closed,detected");
		expect(seen.slice(0, -1).every((d) => d === "detected")).toBe(true);
		await page.close();
	});

	it("pages incidents: the newest 200, then older ones on request, to the oldest", async () => {
		const page = await signedIn("/incidents", tokens.read);
		await page.locator("#incidents-meta", { hasText: /incidents?$|more older$/ }).waitFor(LIVE);
		// 450 made-up incidents, newest first, as the API pages them.
		const incidents = madeUpIncidents(450, "fleet", Date.now());
		await page.route(
			(u) => u.pathname === "/v1/incidents",
			(route) => {
				const u = new URL(route.request().url());
				const from = Number(u.searchParams.get("cursor") ?? 0);
				const limit = Number(u.searchParams.get("limit") ?? 50);
				const next = from + limit < incidents.length ? String(from + limit) : null;
				return route.fulfill({ json: { incidents: incidents.slice(from, from + limit), next_cursor: next } });
			},
		);
		await page.reload();
		const rows = page.locator("#incidents-table tbody tr");
		const meta = page.locator("#incidents-meta");
		await meta.filter({ hasText: "200 shown, more older" }).waitFor(LIVE);
		expect(await rows.count()).toBe(200);
		await page.locator("#incidents-older").click();
		await meta.filter({ hasText: "400 shown, more older" }).waitFor(LIVE);
		await page.locator("#incidents-older").click();
		await meta.filter({ hasText: "450 incidents" }).waitFor(LIVE);
		expect(await rows.count()).toBe(450);
		expect(await rows.last().textContent()).toContain("error number 449");
		expect(await page.locator("#incidents-older").isHidden()).toBe(true);
		await page.close();
	});

	it("filters incidents by agent as the jobs list does: the address keeps it, polls and Older send it, and a name of no agent is said to be none", async () => {
		const page = await signedIn("/incidents", tokens.read, { fakeClock: true });
		await page.locator("#incidents-meta", { hasText: /incidents?$|more older$/ }).waitFor(LIVE);
		// Made-up incidents of fleet-0000… (one each), and an older one of fleet-0001 on a second page.
		const incidents = madeUpIncidents(3, "agentf", Date.now());
		const older = { ...madeUpIncidents(1, "agentf-old", Date.now() - 3_600_000)[0]!, agent: "fleet-0001", error: "an older error" };
		const asked: string[] = [];
		await page.route(
			(u) => u.pathname === "/v1/incidents",
			(route) => {
				const q = new URL(route.request().url()).searchParams;
				// A name the API refuses is the Worker's to answer.
				if (q.get("agent") === "Not An Agent") return route.continue();
				asked.push(q.toString());
				const mine = incidents.filter((i) => !q.get("agent") || i.agent === q.get("agent"));
				if (q.get("agent") === "fleet-0001") return route.fulfill({ json: q.get("cursor") ? { incidents: [older], next_cursor: null } : { incidents: mine, next_cursor: "1" } });
				return route.fulfill({ json: { incidents: mine, next_cursor: null } });
			},
		);
		await page.goto(`${url}/incidents?agent=fleet-0001&state=detected`);
		const rows = page.locator("#incidents-table tbody tr");
		const agentField = page.getByRole("combobox", { name: "Agent" });
		await page.locator(`#incidents-table tr[data-incident="${incidents[1]!.id}"]`).waitFor(LIVE);
		expect(await agentField.inputValue()).toBe("fleet-0001");
		expect(await rows.count()).toBe(1);
		expect(asked.at(-1)).toBe("limit=200&agent=fleet-0001&state=detected");
		// The poll asks for the same agent's.
		const polls = await watchTimers(page, 10_000);
		const before = asked.length;
		await page.clock.runFor(10_000);
		await expect.poll(polls, LIVE).toBe(1);
		expect(asked.slice(before)).toEqual(["limit=200&agent=fleet-0001&state=detected"]);
		// Older pages the same agent's incidents.
		await page.locator("#incidents-older").click();
		await page.locator("#incidents-meta", { hasText: "2 incidents" }).waitFor(LIVE);
		expect(asked.at(-1)).toBe("limit=200&agent=fleet-0001&state=detected&cursor=1");
		// Another name, typed and entered: its incidents alone, and the address says so.
		await agentField.fill("fleet-0002");
		await agentField.press("Enter");
		await page.locator(`#incidents-table tr[data-incident="${incidents[2]!.id}"]`).waitFor(LIVE);
		await expect.poll(() => rows.count(), LIVE).toBe(1);
		expect(new URL(page.url()).search).toBe("?agent=fleet-0002&state=detected");
		// A name of no agent: said as the jobs list says it, not only that none match.
		const nope = `nope-${run}`;
		const empty = page.locator("#incidents-empty");
		await agentField.fill(nope);
		await agentField.press("Enter");
		await expect.poll(() => empty.textContent(), LIVE).toBe(`No incidents match: no agent named ${nope}.`);
		expect(await empty.isVisible()).toBe(true);
		expect(await rows.count()).toBe(0);
		// The scheduler's own incidents are filed under "scheduler", an agent route knows no such name.
		await agentField.fill("scheduler");
		await agentField.press("Enter");
		await expect.poll(() => empty.textContent(), LIVE).toBe("No incidents match.");
		// A name the API refuses is said at its field, marked invalid until edited.
		await agentField.fill("Not An Agent");
		await agentField.press("Enter");
		const refusal = page.locator("#incidents-filter-error");
		await refusal.waitFor({ state: "visible", ...LIVE });
		expect(await refusal.textContent()).toMatch(/must be an agent name/);
		expect(await agentField.getAttribute("aria-invalid")).toBe("true");
		expect(await accessibleDescription(page, "#incidents-filter input[name=agent]")).toBe(await refusal.textContent());
		// Cleared, every agent's again, and the refusal goes.
		await agentField.fill("");
		await page.locator(`#incidents-table tr[data-incident="${incidents[0]!.id}"]`).waitFor(LIVE);
		await expect.poll(() => rows.count(), LIVE).toBe(3);
		await refusal.waitFor({ state: "hidden", ...LIVE });
		expect(new URL(page.url()).search).toBe("?state=detected");
		// A state the list has not is said to be left out, and the address made to match what is shown.
		await page.goto(`${url}/incidents?state=bogus&agent=fleet-0002`);
		await page.locator("#notice", { hasText: "Not a filter this list has, so left out: state=bogus." }).waitFor(LIVE);
		await page.locator(`#incidents-table tr[data-incident="${incidents[2]!.id}"]`).waitFor(LIVE);
		expect(new URL(page.url()).search).toBe("?agent=fleet-0002");
		expect(asked.at(-1)).toBe("limit=200&agent=fleet-0002");
		await page.close();
	});

	it("says on each incident's state whether and when it was paged, the exact time with its zone, and not paged for one open and unpaged", async () => {
		// 09:00:00 and 10:00:00 in Los Angeles.
		const at = (hour: number) => new Date(Date.UTC(2020, 0, 15, 17 + hour)).toISOString();
		const made = madeUpIncidents(3, "paged", Date.parse(at(2)));
		const [detected, alerted, resolved] = [made[0]!, { ...made[1]!, state: "alerted", alerted_at: at(0) }, { ...made[2]!, state: "resolved", resolved_at: at(1) }];
		const zoned = await browser.newContext({ viewport: { width: 1280, height: 800 }, timezoneId: "America/Los_Angeles" });
		const page = await zoned.newPage();
		await page.route((u) => u.pathname === "/v1/incidents", (route) => route.fulfill({ json: { incidents: [detected, alerted, resolved], next_cursor: null } }));
		await signInOn(page, "/incidents", tokens.read);
		const state = (id: string) => page.locator(`#incidents-table tr[data-incident="${id}"] td:nth-child(4)`);
		await state(alerted.id).waitFor(LIVE);
		expect(await state(alerted.id).textContent()).toMatch(/^alerted ?alerted 15 Jan(uary)?( 2020)?, 09:00:00 (GMT-8|PST) \(\d+ years ago\)$/);
		expect(await state(alerted.id).locator("time").getAttribute("datetime")).toBe(at(0));
		expect(await state(detected.id).textContent()).toBe("detectednot paged");
		// Resolved without a page: nothing said of one (it is no longer waited for).
		expect(await state(resolved.id).textContent()).not.toMatch(/paged|alerted/);
		await zoned.close();
	});

	it("charts tokens per agent per day", async () => {
		const { agent } = await completedJob(`dash-usage-${run}`);
		// Its day in the usage index before the page reads it.
		await expect.poll(async () => (await call<{ days: { jobs: number }[] }>("GET", `/v1/usage?agent=${agent}`, tokens.read)).days.map((d) => d.jobs), LIVE).toEqual([1]);
		const page = await signedIn("/usage");
		await page.locator("#usage-chart svg.usage-chart rect.bar").first().waitFor(LIVE);
		const agents = await page.locator("#usage-chart rect.bar[data-agent]").evaluateAll((rs) => rs.map((r) => r.getAttribute("data-agent")));
		// Drawn apart if among the eight busiest agents of the week (the earlier tests' and files' agents
		// share it); else within the grey segment the legend counts.
		if (!agents.includes(agent)) expect(await page.locator("#usage-legend li[data-others]").count()).toBe(1);
		expect(new Set(agents).size).toBeLessThanOrEqual(8);
		const row = page.locator("#usage-table tbody tr", { hasText: agent });
		expect(await row.count()).toBe(1);
		// The row is the index's sum for the agent's day, every ended job counted (no cap on jobs read).
		const day = (await row.locator("td").first().textContent())!;
		const { days } = await call<{ days: { jobs: number; input_tokens: number }[] }>("GET", `/v1/usage?agent=${agent}&since=${day}&until=${day}`, tokens.read);
		expect(days).toHaveLength(1);
		expect(await row.locator("td").nth(2).textContent()).toBe(days[0]!.jobs.toLocaleString("en-US"));
		expect(await row.locator("td").nth(3).textContent()).toBe(days[0]!.input_tokens.toLocaleString("en-US"));
		await page.locator("#usage-meta", { hasText: /^Last 7 days \(UTC\) · [\d,]+ ended jobs?( · \$\d+\.\d{4}( \([\d,]+ of [\d,]+ priced\))?)?$/ }).waitFor(LIVE);
		await shot(page, "usage");
		await page.close();
	});

	it("charts a large fleet's eight busiest agents apart and the rest as one segment a day", async () => {
		const page = await signedIn("/usage");
		const today = new Date().toISOString().slice(0, 10);
		const yesterday = new Date(Date.parse(today) - 86_400_000).toISOString().slice(0, 10);
		// 12 agents today, agent-00 the busiest; yesterday the same but the four quietest on a model without a price.
		const agent = (i: number) => `fleet-${String(i).padStart(2, "0")}`;
		const days: UsageRow[] = [today, yesterday].flatMap((day) =>
			Array.from({ length: 12 }, (_, i) => ({
				day,
				agent: agent(i),
				jobs: 2,
				input_tokens: (12 - i) * 1000,
				output_tokens: 100,
				cache_creation_input_tokens: 0,
				cache_read_input_tokens: 0,
				cost_usd: day === yesterday && i >= 8 ? null : 0.01,
				priced_jobs: day === yesterday && i >= 8 ? 0 : 2,
			})),
		);
		// The first load's reads done (the eight's days are read after them), before the fake answers.
		await page.locator("#usage-meta", { hasText: /^Last 7 days \(UTC\) · / }).waitFor(LIVE);
		const served = await fakeUsage(page, days);
		await page.reload();
		await page.locator("#usage-chart rect.bar").first().waitFor(LIVE);
		const named = await page.locator("#usage-chart rect.bar[data-agent]").evaluateAll((rs) => rs.map((r) => r.getAttribute("data-agent")));
		const eight = Array.from({ length: 8 }, (_, i) => agent(i));
		expect(named).toEqual([...eight, ...eight]);
		const other = page.locator("#usage-chart rect.bar[data-others]");
		expect(await other.count()).toBe(2);
		expect(await other.evaluateAll((rs) => rs.map((r) => r.getAttribute("data-others")))).toEqual(["4", "4"]);
		// The grey segment sums the four quietest agents: 4,000 + 3,000 + 2,000 + 1,000 input and 400 output tokens.
		const todays = page.locator("#usage-chart rect.bar[data-others]", { has: page.locator("title", { hasText: ` · ${today}\n` }) }).locator("title");
		expect(await todays.textContent()).toBe(`4 other agents · ${today}\n10,400 tokens in 8 jobs\ninput 10,000 · output 400 · cache write 0 · cache read 0\n$0.0400`);
		// Yesterday theirs had no price: no cost, though the busiest eight's days have one.
		const yesterdays = page.locator("#usage-chart rect.bar[data-others]", { has: page.locator("title", { hasText: ` · ${yesterday}\n` }) }).locator("title");
		expect(await yesterdays.textContent()).toBe(`4 other agents · ${yesterday}\n10,400 tokens in 8 jobs\ninput 10,000 · output 400 · cache write 0 · cache read 0`);
		// An agent's segment is its own day.
		expect(await page.locator(`#usage-chart rect.bar[data-agent="fleet-00"] title`).first().textContent()).toBe(`fleet-00 · ${yesterday}\n12,100 tokens in 2 jobs\ninput 12,000 · output 100 · cache write 0 · cache read 0\n$0.0100`);
		expect(await page.locator("#usage-legend li").allTextContents()).toEqual([...eight, "4 other agents"]);
		// The value axis counts in round steps up past the busiest day (79,200 tokens).
		expect(await page.locator("#usage-chart svg > text[text-anchor=end]").allTextContents()).toEqual(["0", "20K", "40K", "60K", "80K"]);
		// The table still lists every agent's day.
		expect(await page.locator("#usage-table tbody tr").count()).toBe(24);
		// The eight's days read by name: not the others'.
		const byName = served.requests.find((u) => u.searchParams.has("agent"))!;
		expect(byName.searchParams.get("agent")).toBe(eight.join(","));
		await page.close();
	});

	const DAY = 86_400_000;
	/**
	 * The usage page, its clock held at the test's now: a UTC midnight passing during the test moves
	 * neither's days. With today's UTC midnight.
	 */
	const usageHeld = async () => {
		const page = await signedIn("/usage", tokens.operate, { ownClock: true });
		const now = Date.now();
		await page.clock.setFixedTime(now);
		return { page, now, today: Math.floor(now / DAY) * DAY };
	};

	it("keeps the usage chart's value axis beside the bars on a phone, where the chart opens scrolled to its newest days, and where it was at a desktop's width", async () => {
		const { page, today } = await usageHeld();
		// A week of two agents, the busiest day 79,200 tokens: an axis of 0 to 80K in steps of 20K.
		const days: UsageRow[] = Array.from({ length: 7 }, (_, d) => [0, 1].map((a) => ({ day: new Date(today - d * DAY).toISOString().slice(0, 10), agent: `axis-${a}`, jobs: 1, input_tokens: (a ? 30_000 : 49_000) - d * 1000, output_tokens: 200, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, cost_usd: null, priced_jobs: 0 }))).flat();
		await page.locator("#usage-meta", { hasText: /^Last 7 days \(UTC\) · / }).waitFor(LIVE);
		await fakeUsage(page, days);
		/**
		 * The chart's box, and each value label's box, the y of the grid line at its value, and whether
		 * it is what is drawn at its middle (not covered by bars); and whether a screen reader is kept
		 * from each (the chart is one image, named; the table beneath has the numbers).
		 */
		const seen = () => page.evaluate<{ box: { left: number; right: number }; scrolled: number; scrollable: boolean; labels: { text: string; left: number; right: number; mid: number; grid: number; top: boolean; hidden: boolean }[]; gridLeft: number; scale: number }>(`(() => {
			const chart = document.querySelector("#usage-chart");
			const box = chart.getBoundingClientRect();
			const plot = chart.querySelector("svg.usage-chart");
			const grid = [...plot.querySelectorAll("line.grid-line")].map((l) => l.getBoundingClientRect());
			const labels = [...chart.querySelectorAll("svg > text[text-anchor=end]")].map((t, i) => {
				const r = t.getBoundingClientRect();
				const mid = r.top + r.height / 2;
				const at = document.elementFromPoint(r.left + r.width / 2, mid);
				return { text: t.textContent, left: r.left, right: r.right, mid, grid: grid[i].top + grid[i].height / 2, top: at === t || t.contains(at), hidden: !!t.closest('[aria-hidden="true"], [role="img"]') };
			});
			const p = plot.getBoundingClientRect();
			return { box: { left: box.left, right: box.right }, scrolled: chart.scrollLeft, scrollable: chart.scrollWidth > chart.clientWidth, labels, gridLeft: grid[0].left - p.left, scale: p.width / plot.viewBox.baseVal.width };
		})()`);
		const check = (s: Awaited<ReturnType<typeof seen>>) => {
			expect(s.labels.map((l) => l.text)).toEqual(["0", "20K", "40K", "60K", "80K"]);
			for (const l of s.labels) {
				// In the box's view, at the left, over what scrolls beneath, level with its grid line.
				expect(l.left, l.text).toBeGreaterThanOrEqual(s.box.left);
				expect(l.right, l.text).toBeLessThan(s.box.left + s.gridLeft);
				expect(l.top, l.text).toBe(true);
				expect(Math.abs(l.mid - l.grid), l.text).toBeLessThan(3);
				expect(l.hidden, l.text).toBe(true);
			}
		};
		await page.setViewportSize({ width: 390, height: 844 });
		await page.reload();
		await page.locator("#usage-chart rect.bar").first().waitFor(LIVE);
		// One image, its name saying what it shows and where its figures are (the table beneath).
		expect(await page.getByRole("img", { name: "Bar chart of the tokens used each day of the last 7 days (UTC), each bar stacked by agent; the table below gives its figures, a row for each agent's day", exact: true }).count()).toBe(1);
		const phone = await seen();
		expect(phone.scrollable).toBe(true);
		expect(phone.scrolled).toBeGreaterThan(0);
		check(phone);
		// Scrolled back to the first days, the labels are where the chart's margin has them.
		await page.locator("#usage-chart").evaluate((c) => { c.scrollLeft = 0; });
		const start = await seen();
		check(start);
		expect(start.labels[0]!.right - start.box.left).toBeCloseTo(56 * start.scale, 0);
		// At a desktop's width nothing scrolls: the labels stand in the chart's margin, 8 units left of the grid.
		await page.setViewportSize({ width: 1366, height: 768 });
		const desk = await seen();
		expect(desk.scrollable).toBe(false);
		check(desk);
		for (const l of desk.labels) expect(l.right - desk.box.left, l.text).toBeCloseTo((64 - 8) * desk.scale, 0);
		await page.close();
		expect(pageErrors).toEqual([]);
	});

	it("keeps the runs chart's lane labels and time zone beside the runs on a phone, opened at its newest runs, a focused mark out from under them, and where they were at a desktop's width", async () => {
		const agent = `dash-lanes-${run}`;
		const at = (i: number) => new Date(Date.UTC(2020, 0, 1, 0, i * 15)).toISOString();
		const runs = Array.from({ length: 40 }, (_, i) => ({
			id: `occ-${i}`, schedule: i % 2 ? "every-15m" : "hourly", source: "cron", scheduled_instant: at(40 - i), dispatch: "on_time", claimed_at: at(40 - i),
			status: "completed", skip_reason: null, skipped_count: null, skipped_from: null,
			job_id: `job-2020-01-01-lanes${String(i).padStart(3, "0")}`, error: null, delivery_outcome: null,
		}));
		const page = await context.newPage();
		page.on("pageerror", (err) => pageErrors.push(`lanes: ${err.message}`));
		await page.setViewportSize({ width: 390, height: 844 });
		await page.route((u) => u.pathname === `/v1/agents/${agent}/runs`, (route) => route.fulfill({ json: { runs, next_cursor: null } }));
		await page.route((u) => u.pathname === `/v1/agents/${agent}/sessions/current`, (route) => route.fulfill({ status: 404, json: { error: { code: "not_found", message: "no session" } } }));
		await signInOn(page, `/agents/${agent}/runs`, tokens.read);
		await page.locator("#runs-chart g.occurrence").nth(39).waitFor(LIVE);
		/**
		 * The chart's box and how far it is scrolled; for each lane, the label drawn on top at its middle
		 * inside the box (none if none is), and the y of its lane's line; the chart's margin in pixels;
		 * and the focused mark's left edge.
		 */
		const seen = () => page.evaluate<{ box: { left: number; right: number }; scrolled: number; scrollable: boolean; atNewest: boolean; zoneShown: boolean; lanes: { text: string; left: number; right: number; mid: number; line: number }[]; margin: number; focused: number | null }>(`(() => {
			const chart = document.querySelector("#runs-chart");
			const box = chart.getBoundingClientRect();
			const plot = chart.querySelector("svg.runs-timeline");
			const margin = 150 * plot.getBoundingClientRect().width / plot.viewBox.baseVal.width;
			const lines = [...plot.querySelectorAll("line.lane-line")].map((l) => { const r = l.getBoundingClientRect(); return r.top + r.height / 2; });
			const lanes = [...plot.querySelectorAll("text.lane")].map((own, i) => {
				const shown = [...chart.querySelectorAll("text.lane")].filter((t) => t.textContent === own.textContent).map((t) => {
					const r = t.getBoundingClientRect();
					const at = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
					return { text: t.textContent, left: r.left, right: r.right, mid: r.top + r.height / 2, line: lines[i], top: at === t || t.contains(at) };
				}).find((l) => l.top && l.left >= box.left && l.right <= box.right);
				return shown || { text: own.textContent, left: NaN, right: NaN, mid: NaN, line: lines[i] };
			});
			const f = document.activeElement.closest("#runs-chart a");
			// The time zone's label drawn on top, inside the box, in its margin.
			const zoneShown = [...chart.querySelectorAll("text.zone")].some((t) => {
				const r = t.getBoundingClientRect();
				const at = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
				return (at === t || t.contains(at)) && r.left >= box.left && r.right <= box.left + margin;
			});
			const atNewest = chart.scrollLeft + chart.clientWidth >= chart.scrollWidth - 1;
			return { box: { left: box.left, right: box.right }, scrolled: chart.scrollLeft, scrollable: chart.scrollWidth > chart.clientWidth, atNewest, zoneShown, lanes, margin, focused: f && f.getBoundingClientRect().left };
		})()`);
		const check = (s: Awaited<ReturnType<typeof seen>>) => {
			expect(s.lanes.map((l) => l.text)).toEqual(["every-15m", "hourly"]);
			expect(s.zoneShown).toBe(true);
			for (const l of s.lanes) {
				// In the box's view, in its margin at the left, over what scrolls beneath, level with its lane.
				expect(l.left, l.text).toBeGreaterThanOrEqual(s.box.left);
				expect(l.right, l.text).toBeLessThan(s.box.left + s.margin);
				expect(Math.abs(l.mid - l.line), l.text).toBeLessThan(3);
			}
		};
		// The chart is the group it was, its own lane labels in it for a screen reader; what is pinned is hidden.
		const a11y = () => page.evaluate<{ own: number; ownHidden: boolean; others: boolean }>(`(() => {
			const plot = document.querySelector("#runs-chart svg.runs-timeline");
			const own = [...plot.querySelectorAll("text.lane")];
			const others = [...document.querySelectorAll("#runs-chart text.lane")].filter((t) => !plot.contains(t));
			return { own: own.length, ownHidden: own.some((t) => !!t.closest('[aria-hidden="true"]')), others: others.every((t) => !!t.closest('[aria-hidden="true"]')) };
		})()`);
		expect(await page.getByRole("group", { name: `Occurrences of ${agent} on a time axis` }).count()).toBe(1);
		expect(await a11y()).toEqual({ own: 2, ownHidden: false, others: true });
		const open = await seen();
		expect(open.scrollable).toBe(true);
		// Opened at its newest runs, as the usage chart opens at its newest days.
		expect(open.atNewest).toBe(true);
		check(open);
		// The chart's one tab stop is its newest run: the box scrolls to it, the labels stay.
		await page.locator("#agent-notepad summary").focus();
		await page.keyboard.press("Tab");
		const newest = await seen();
		expect(newest.scrolled).toBeGreaterThan(0);
		check(newest);
		// Walked back with the arrow keys, a focused mark is scrolled clear of the labels, not under them.
		for (let i = 0; i < 30; i++) await page.keyboard.press("ArrowLeft");
		const walked = await seen();
		expect(walked.scrolled).toBeGreaterThan(0);
		check(walked);
		expect(walked.focused).toBeGreaterThanOrEqual(walked.box.left + walked.margin);
		// At a desktop's width nothing scrolls: the labels stand in the chart's margin, 12 units left of its lines.
		await page.setViewportSize({ width: 1366, height: 768 });
		const desk = await seen();
		expect(desk.scrollable).toBe(false);
		check(desk);
		for (const l of desk.lanes) expect(l.right - desk.box.left, l.text).toBeCloseTo((150 - 12) * (desk.margin / 150), 0);
		expect(await a11y()).toEqual({ own: 2, ownHidden: false, others: true });
		await page.close();
		expect(pageErrors).toEqual([]);
	});

	it("opens the runs chart on a phone with its newest run in view where the runs are minutes apart or one alone, not at an end padded past it", async () => {
		const agent = `dash-one-run-${run}`;
		const at = (minute: number) => new Date(Date.UTC(2020, 0, 1, 0, minute)).toISOString();
		const occurrence = (i: number, minute: number) => ({
			id: `occ-${i}`, schedule: null, source: "manual", scheduled_instant: null, dispatch: "manual", claimed_at: at(minute),
			status: "completed", skip_reason: null, skipped_count: null, skipped_from: null,
			job_id: `job-2020-01-01-onerun${i}`, error: null, delivery_outcome: null,
		});
		// A new agent's first run (its axis padded 30 s each side, the run at its middle), then two a minute apart.
		for (const runs of [[occurrence(0, 0)], [occurrence(1, 1), occurrence(0, 0)]]) {
			const page = await context.newPage();
			page.on("pageerror", (err) => pageErrors.push(`one run: ${err.message}`));
			await page.setViewportSize({ width: 375, height: 800 });
			await page.route((u) => u.pathname === `/v1/agents/${agent}/runs`, (route) => route.fulfill({ json: { runs, next_cursor: null } }));
			await page.route((u) => u.pathname === `/v1/agents/${agent}/sessions/current`, (route) => route.fulfill({ status: 404, json: { error: { code: "not_found", message: "no session" } } }));
			await signInOn(page, `/agents/${agent}/runs`, tokens.read);
			const newest = page.locator(`#runs-chart a[href="/jobs/${runs[0]!.job_id}"] path.mark`);
			await newest.waitFor({ state: "attached", ...LIVE });
			// Drawn on top inside the chart's box, right of the lane labels pinned at its left.
			const shown = await page.evaluate<{ scrollable: boolean; inBox: boolean; onTop: boolean }>(`(() => {
				const chart = document.querySelector("#runs-chart");
				const box = chart.getBoundingClientRect();
				const plot = chart.querySelector("svg.runs-timeline");
				const margin = 150 * plot.getBoundingClientRect().width / plot.viewBox.baseVal.width;
				const mark = chart.querySelector('a[href="/jobs/${runs[0]!.job_id}"] path.mark');
				const r = mark.getBoundingClientRect();
				const at = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
				return { scrollable: chart.scrollWidth > chart.clientWidth, inBox: r.left >= box.left + margin && r.right <= box.right, onTop: !!at && mark.closest("a").contains(at) };
			})()`);
			expect(shown, `${runs.length} runs`).toEqual({ scrollable: true, inBox: true, onTop: true });
			await page.close();
		}
		expect(pageErrors).toEqual([]);
	});

	it("cuts a lane name longer than the runs chart's margin with …, whole in its tooltip and to a screen reader, where its start ran out of the chart", async () => {
		const agent = `dash-long-lanes-${run}`;
		const long = "nightly-report-for-the-billing-and-invoicing-team";
		const at = (i: number) => new Date(Date.UTC(2020, 0, 1, 0, i * 15)).toISOString();
		const runs = [long, "hourly"].map((schedule, i) => ({
			id: `occ-${i}`, schedule, source: "cron", scheduled_instant: at(i), dispatch: "on_time", claimed_at: at(i),
			status: "completed", skip_reason: null, skipped_count: null, skipped_from: null,
			job_id: `job-2020-01-01-longl${i}`, error: null, delivery_outcome: null,
		}));
		const page = await context.newPage();
		page.on("pageerror", (err) => pageErrors.push(`long lanes: ${err.message}`));
		await page.setViewportSize({ width: 1366, height: 768 });
		await page.route((u) => u.pathname === `/v1/agents/${agent}/runs`, (route) => route.fulfill({ json: { runs, next_cursor: null } }));
		await page.route((u) => u.pathname === `/v1/agents/${agent}/sessions/current`, (route) => route.fulfill({ status: 404, json: { error: { code: "not_found", message: "no session" } } }));
		await signInOn(page, `/agents/${agent}/runs`, tokens.read);
		await page.locator("#runs-chart g.occurrence").nth(1).waitFor(LIVE);
		const labels = await page.evaluate<{ text: string; label: string | null; title: string | null; left: number; chartLeft: number }[]>(`(() => {
			const plot = document.querySelector("#runs-chart svg.runs-timeline");
			const chartLeft = plot.getBoundingClientRect().left;
			return [...plot.querySelectorAll("text.lane")].map((t) => ({
				text: [...t.childNodes].filter((n) => n.nodeType === 3).map((n) => n.textContent).join(""),
				label: t.getAttribute("aria-label"),
				title: t.querySelector("title") ? t.querySelector("title").textContent : null,
				left: t.getBoundingClientRect().left,
				chartLeft,
			}));
		})()`);
		// Lanes in name order: hourly, then the long one.
		const [whole, cut] = labels;
		// Drawn inside the chart, from its first character, with the rest said where it is cut.
		expect(cut!.left).toBeGreaterThanOrEqual(cut!.chartLeft);
		expect(cut!.text.endsWith("…")).toBe(true);
		expect(long.startsWith(cut!.text.slice(0, -1))).toBe(true);
		expect(cut!.text.length).toBeGreaterThan(10);
		expect([cut!.label, cut!.title]).toEqual([long, long]);
		// A name that fits is as it was.
		expect(whole).toMatchObject({ text: "hourly", label: null, title: null });
		await page.close();
		expect(pageErrors).toEqual([]);
	});

	it("draws a week of a 1,000-agent fleet's usage as a chart of all of it over a table of its first 200 rows, reading the rest on request", async () => {
		const { page, now, today } = await usageHeld();
		const days: UsageRow[] = [];
		for (let d = 0; d < 7; d++) {
			for (let a = 0; a < 1000; a++) {
				days.push({ day: new Date(today - d * DAY).toISOString().slice(0, 10), agent: `fleet-${String(a).padStart(4, "0")}`, jobs: 24, input_tokens: 1000 + a, output_tokens: 200, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, cost_usd: 0.05, priced_jobs: 24 });
			}
		}
		await page.locator("#usage-meta", { hasText: /^Last 7 days \(UTC\) · / }).waitFor(LIVE);
		const served = await fakeUsage(page, days);
		await page.reload();
		await page.locator("#usage-meta", { hasText: "168,000 ended jobs" }).waitFor(LIVE);
		const rows = page.locator("#usage-table tbody tr");
		const shown = page.locator("#usage-rows");
		expect(await rows.count()).toBe(200);
		expect(await shown.textContent()).toBe("200 of 7,000 rows shown");
		// The chart is of every row: the eight busiest agents, and the other 992 as one segment a day.
		const eight = Array.from({ length: 8 }, (_, i) => `fleet-0${999 - i}`);
		expect(await page.locator("#usage-legend li").allTextContents()).toEqual([...eight, "992 other agents"]);
		expect(await page.locator("#usage-chart rect.bar[data-agent]").count()).toBe(56);
		const others = page.locator("#usage-chart rect.bar[data-others]");
		expect(await others.count()).toBe(7);
		// 992 agents' 1,000 + a input tokens (a = 0 to 991) and 200 output tokens each, 24 jobs at $0.05.
		expect(await others.first().locator("title").textContent()).toMatch(/^992 other agents · \d{4}-\d{2}-\d{2}\n1,681,936 tokens in 23,808 jobs\ninput 1,483,536 · output 198,400 · cache write 0 · cache read 0\n\$49\.6000$/);
		console.log(`usage page of a 1,000-agent week: ${served.requests.length} requests, ${served.bytes} B`);
		// What the view shows: the week's 7 day totals, the busiest 8 agents and their 56 days, and the
		// table's first 200 rows; not the week's 7,000 rows (7 pages, 1.3 MB).
		const asked = (u: URL) => `${u.searchParams.get("group") ?? (u.searchParams.has("agent") ? "by name" : "by agent")} limit=${u.searchParams.get("limit")}`;
		expect(served.requests.map(asked).sort()).toEqual(["agent limit=8", "by agent limit=200", "by name limit=56", "day limit=7"]);
		expect(served.bytes).toBeLessThan(60_000);
		// Today's rows first, by agent.
		expect(await rows.first().locator("td").nth(1).textContent()).toBe("fleet-0000");
		await page.locator("#usage-more").click();
		await expect.poll(() => rows.count(), LIVE).toBe(400);
		expect(await shown.textContent()).toBe("400 of 7,000 rows shown");
		expect(await rows.nth(200).locator("td").nth(1).textContent()).toBe("fleet-0200");
		expect(served.requests.slice(4).map(asked)).toEqual(["by agent limit=200"]);
		await page.locator("#usage-all").click();
		await expect.poll(() => rows.count(), LIVE).toBe(7000);
		expect(await page.locator("#usage-more").isHidden()).toBe(true);
		expect(await page.locator("#usage-all").isHidden()).toBe(true);
		expect(await shown.textContent()).toBe("");
		expect(await rows.last().locator("td").nth(1).textContent()).toBe("fleet-0999");
		// The rest read 1,000 rows at a time.
		expect(served.requests.slice(5).map(asked)).toEqual(Array(7).fill("by agent limit=1000"));
		// The CSV reads every row afresh, 1,000 at a time: a header and 7,000 agent-days.
		const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download CSV" }).click()]);
		expect((readFileSync(await download.path(), "utf8")).split("\r\n")).toHaveLength(7002);
		expect(served.requests.slice(12).map(asked)).toEqual(Array(7).fill("by agent limit=1000"));
		await page.close();
	});

	it("shows the last 30 or 90 days' usage when picked, kept in the address, with the period's jobs and cost, its days labelled without overlapping", async () => {
		const DAY = 86_400_000;
		const now = Date.now();
		const today = Math.floor(now / DAY) * DAY;
		const dayOf = (back: number) => new Date(today - back * DAY).toISOString().slice(0, 10);
		const usage = (back: number, agent: string, jobs: number, cost: number): UsageRow => ({ day: dayOf(back), agent, jobs, input_tokens: 1000, output_tokens: 100, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, cost_usd: cost, priced_jobs: jobs });
		// The one 30 days back is of a model without a price: in the quarter, not the month.
		const rows = [usage(0, "period-a", 1, 0.01), usage(20, "period-a", 2, 0.02), { ...usage(30, "period-c", 1, 0), cost_usd: null, priced_jobs: 0 }, usage(60, "period-b", 4, 0.04)];
		const page = await signedIn("/usage", tokens.operate, { ownClock: true });
		// The page's days are the test's: a UTC midnight passing during the test moves neither.
		await page.clock.setFixedTime(now);
		await page.locator("#usage-meta", { hasText: /^Last 7 days \(UTC\) · / }).waitFor(LIVE);
		const served = await fakeUsage(page, rows);
		await page.reload();
		const meta = page.locator("#usage-meta");
		await meta.filter({ hasText: "Last 7 days (UTC) · 1 ended job · $0.0100" }).waitFor(LIVE);
		const labels = page.locator("#usage-chart text.day-label");
		expect(await labels.count()).toBe(7);
		const dayBars = (back: number) => page.locator("#usage-chart rect.bar title", { hasText: ` · ${dayOf(back)}\n` });
		expect(await dayBars(20).count()).toBe(0);
		/** Each day label's left and right edge, in order: none may run into the next. */
		const overlaps = async () => {
			const boxes = await labels.evaluateAll((ls) => ls.map((l) => l.getBoundingClientRect()).map((r) => [r.left, r.right]));
			return boxes.slice(1).filter(([left], i) => left < boxes[i]![1]!).length;
		};
		expect(await overlaps()).toBe(0);
		// A month: the address says it, the days since 29 days ago are read, and the 20-day-old day is drawn.
		await page.getByLabel("Period").selectOption("30");
		await meta.filter({ hasText: "Last 30 days (UTC) · 3 ended jobs · $0.0300" }).waitFor(LIVE);
		expect(new URL(page.url()).search).toBe("?days=30");
		expect(served.requests.at(-1)!.searchParams.get("since")).toBe(dayOf(29));
		expect(await dayBars(20).count()).toBe(1);
		expect(await dayBars(60).count()).toBe(0);
		// Every third day labelled, back from today's: 10 labels, today's the last, none overlapping.
		expect(await labels.count()).toBe(10);
		expect(await labels.last().textContent()).toBe(new Date(today).toLocaleDateString("en-GB", { day: "numeric", month: "short", timeZone: "UTC" }));
		expect(await overlaps()).toBe(0);
		// A quarter: every seventh day labelled.
		await page.getByLabel("Period").selectOption("90");
		await meta.filter({ hasText: "Last 90 days (UTC) · 8 ended jobs · $0.0700 (7 of 8 priced)" }).waitFor(LIVE);
		expect(new URL(page.url()).search).toBe("?days=90");
		expect(await dayBars(60).count()).toBe(1);
		expect(await labels.count()).toBe(13);
		expect(await overlaps()).toBe(0);
		// The period's agent-days as CSV, a cost no job was priced for left empty.
		const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download CSV" }).click()]);
		expect(download.suggestedFilename()).toBe(`drover-usage-${dayOf(89)}-to-${dayOf(0)}.csv`);
		expect(readFileSync(await download.path(), "utf8")).toBe(
			"day,agent,jobs,input_tokens,output_tokens,cache_creation_input_tokens,cache_read_input_tokens,cost_usd,priced_jobs\r\n" +
				`${dayOf(0)},period-a,1,1000,100,0,0,0.01,1\r\n${dayOf(20)},period-a,2,1000,100,0,0,0.02,2\r\n${dayOf(30)},period-c,1,1000,100,0,0,,0\r\n${dayOf(60)},period-b,4,1000,100,0,0,0.04,4\r\n`,
		);
		// The address reopens the period; one the page does not have is said and left out.
		await page.setViewportSize({ width: 390, height: 844 });
		await page.reload();
		await meta.filter({ hasText: "Last 90 days (UTC)" }).waitFor(LIVE);
		expect(await page.getByLabel("Period").inputValue()).toBe("90");
		// On a phone the chart scrolls in its box, opened at its newest days.
		const chart = page.locator("#usage-chart");
		expect(await chart.evaluate((c) => c.scrollWidth > c.clientWidth && c.scrollLeft + c.clientWidth >= c.scrollWidth - 1)).toBe(true);
		await page.goto(`${url}/usage?days=12`);
		await page.locator("#notice", { hasText: "Not a period this page has, so left out: days=12." }).waitFor(LIVE);
		await meta.filter({ hasText: "Last 7 days (UTC) · 1 ended job" }).waitFor(LIVE);
		expect(new URL(page.url()).search).toBe("");
		expect(await page.getByLabel("Period").inputValue()).toBe("7");
		await page.close();
	});

	it("says a usage agent filter the API refuses at its field, marked invalid until edited, and takes it away once a corrected one loads", async () => {
		const page = await signedIn("/usage", tokens.read);
		const meta = page.locator("#usage-meta");
		await meta.filter({ hasText: /^Last 7 days \(UTC\)/ }).waitFor(LIVE);
		const agent = page.getByLabel("Agent", { exact: true });
		const error = page.locator("#usage-filter-error");
		await agent.fill("Bad Name");
		await agent.press("Enter");
		await error.filter({ hasText: "agent" }).waitFor({ state: "visible", ...LIVE });
		// Said with the field, which has the focus, and marked wrong; not in the page's notice too.
		expect(await accessibleDescription(page, '#usage-filter input[name="agent"]')).toBe(await error.textContent());
		expect(await agent.getAttribute("aria-invalid")).toBe("true");
		expect(await page.locator("#notice").isVisible()).toBe(false);
		await agent.fill("");
		expect(await agent.getAttribute("aria-invalid")).toBeNull();
		await agent.press("Enter");
		await error.waitFor({ state: "hidden", ...LIVE });
		expect(await accessibleDescription(page, '#usage-filter input[name="agent"]')).toBeFalsy();
		expect(new URL(page.url()).search).toBe("");
		await page.close();
	});

	it("shows one agent's usage when its name is given, from its runs page's Usage link too, and says when no agent has the name", async () => {
		const { agent } = await completedJob(`dash-usage-of-${run}`);
		await expect.poll(async () => (await call<{ days: { jobs: number }[] }>("GET", `/v1/usage?agent=${agent}`, tokens.read)).days.map((d) => d.jobs), LIVE).toEqual([1]);
		const page = await signedIn(`/agents/${agent}/runs`, tokens.read);
		const asked: URL[] = [];
		page.on("request", (r) => {
			const u = new URL(r.url());
			if (u.pathname === "/v1/usage") asked.push(u);
		});
		await page.locator(".view-head").getByRole("link", { name: "Usage", exact: true }).click();
		const meta = page.locator("#usage-meta");
		await meta.filter({ hasText: new RegExp(`^Last 7 days \\(UTC\\) of ${agent} · 1 ended job`) }).waitFor(LIVE);
		expect(new URL(page.url()).search).toBe(`?agent=${agent}`);
		expect(await page.getByLabel("Agent", { exact: true }).inputValue()).toBe(agent);
		// Every read is of the agent alone: its one day in the table, its bars alone in the chart.
		expect(asked.length).toBeGreaterThan(0);
		expect(asked.every((u) => u.searchParams.get("agent") === agent)).toBe(true);
		expect(await page.locator("#usage-table tbody tr td:nth-child(2)").allTextContents()).toEqual([agent]);
		expect(await page.locator("#usage-legend li").allTextContents()).toEqual([agent]);
		// A name no agent has is said as such, not as an idle agent.
		const nope = `no-such-${run}`;
		await page.getByLabel("Agent", { exact: true }).fill(nope);
		await page.getByLabel("Agent", { exact: true }).press("Enter");
		await page.locator("#usage-table tbody td", { hasText: `No usage: no agent named ${nope}.` }).waitFor(LIVE);
		expect(new URL(page.url()).search).toBe(`?agent=${nope}`);
		// Cleared, every agent's again; with the period kept in the address beside it.
		await page.getByLabel("Period").selectOption("30");
		expect(new URL(page.url()).search).toBe(`?days=30&agent=${nope}`);
		await page.getByLabel("Agent", { exact: true }).fill("");
		await meta.filter({ hasText: /^Last 30 days \(UTC\) · / }).waitFor(LIVE);
		expect(new URL(page.url()).search).toBe("?days=30");
		// The fleet's day totals, read again without the name.
		expect(asked.filter((u) => u.searchParams.get("group") === "day").at(-1)!.searchParams.has("agent")).toBe(false);
		await page.close();
	});

	it("says a day's cost is of only some of its jobs when the others ran on a model without a price", async () => {
		const page = await signedIn("/usage");
		const today = new Date().toISOString().slice(0, 10);
		await fakeUsage(page, [{ day: today, agent: "mixed", jobs: 5, input_tokens: 1000, output_tokens: 100, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, cost_usd: 0.0123, priced_jobs: 1 }]);
		await page.reload();
		const row = page.locator("#usage-table tbody tr", { hasText: "mixed" });
		await row.waitFor(LIVE);
		expect(await row.locator("td").last().textContent()).toBe("$0.0123 (1 of 5 priced)");
		expect(await page.locator("#usage-chart rect.bar title").first().textContent()).toContain("\n$0.0123 (1 of 5 priced)");
		await page.close();
	});

	it("says no cost, not $0, for a day whose only priced jobs made no model call", async () => {
		const page = await signedIn("/usage");
		const today = new Date().toISOString().slice(0, 10);
		// A cancelled and a failed run that made no call (priced, at $0) and a run on a model without a price.
		await fakeUsage(page, [{ day: today, agent: "unpriced", jobs: 3, input_tokens: 1000, output_tokens: 100, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, cost_usd: null, priced_jobs: 2 }]);
		await page.reload();
		const row = page.locator("#usage-table tbody tr", { hasText: "unpriced" });
		await row.waitFor(LIVE);
		expect(await row.locator("td").last().textContent()).toBe("—");
		expect(await page.locator("#usage-chart rect.bar title").first().textContent()).not.toContain("$");
		await page.close();
	});

	it("shows why the usage page could not load, and no longer says it is loading", async () => {
		const page = await signedIn("/usage");
		await page.locator("#usage-meta", { hasText: /^Last 7 days/ }).waitFor(LIVE);
		await page.route(
			(u) => u.pathname === "/v1/usage",
			(route) => route.fulfill({ status: 503, json: { error: { code: "unavailable", message: "the job index is unavailable" } } }),
		);
		await page.reload();
		await page.locator("#notice", { hasText: "the job index is unavailable" }).waitFor(LIVE);
		expect(await page.locator("#usage-meta").textContent()).toBe("");
		await page.close();
	});

	it("finds a large fleet's agents by the start of their name, asking the API for them, kept in the address", async () => {
		const page = await signedIn("/", tokens.read);
		await fleetShown(page);
		const { requests } = await fakeFleet(page, 2516);
		await page.reload();
		const rows = page.locator("#fleet-table tbody tr[data-agent]");
		const meta = page.locator("#fleet-meta");
		await meta.filter({ hasText: "100 of 2,516 agents shown" }).waitFor(LIVE);
		// Typed a character at a time: asked once the typing rests, from the first page.
		await page.getByLabel("Name starts with").pressSequentially("fleet-012");
		await meta.filter({ hasText: /^10 agents · / }).waitFor(LIVE);
		expect(await rows.evaluateAll((rs) => rs.map((r) => r.getAttribute("data-agent")))).toEqual(Array.from({ length: 10 }, (_, i) => `fleet-012${i}`));
		expect(new URL(page.url()).search).toBe("?prefix=fleet-012");
		const asked = requests.filter((u) => u.searchParams.has("prefix")).map((u) => u.searchParams.get("prefix"));
		expect(asked).toEqual(["fleet-012"]);
		// More than a page: counted as shown, the rest on request, within the search.
		await page.getByLabel("Name starts with").fill("fleet-1");
		await page.getByLabel("Name starts with").press("Enter");
		await meta.filter({ hasText: /^100 of more agents shown/ }).waitFor(LIVE);
		await page.locator("#fleet-more").click();
		await meta.filter({ hasText: /^200 of more agents shown/ }).waitFor(LIVE);
		expect(await rows.evaluateAll((rs) => rs.every((r) => r.getAttribute("data-agent")!.startsWith("fleet-1")))).toBe(true);
		expect(requests.at(-1)!.searchParams.get("prefix")).toBe("fleet-1");
		// The address reopens the search; a name no agent starts with is said.
		await page.reload();
		await meta.filter({ hasText: /^100 of more agents shown/ }).waitFor(LIVE);
		expect(await page.getByLabel("Name starts with").inputValue()).toBe("fleet-1");
		await page.getByLabel("Name starts with").fill("zzz");
		await page.locator("#fleet-table tbody td", { hasText: "No agents whose name starts with zzz." }).waitFor(LIVE);
		// One no name could start with is said so, not asked of the API (which would refuse it).
		await page.getByLabel("Name starts with").fill("Fleet");
		await page.locator("#fleet-table tbody td", { hasText: "No agent's name starts with Fleet: names are lowercase letters, digits and dashes" }).waitFor(LIVE);
		expect(requests.some((u) => u.searchParams.get("prefix") === "Fleet")).toBe(false);
		// Cleared: the whole fleet, with its total, and an address without the search.
		await page.getByLabel("Name starts with").fill("");
		await meta.filter({ hasText: "100 of 2,516 agents shown" }).waitFor(LIVE);
		expect(new URL(page.url()).search).toBe("");
		await page.close();
	});

	it("pages a large fleet: the first 100 agents at once, the total from the status, counts said to be of those shown, and the rest on request", async () => {
		const page = await signedIn("/", tokens.read);
		await fleetShown(page);
		const { agents, requests } = await fakeFleet(page, 2516);
		await page.reload();
		const rows = page.locator("#fleet-table tbody tr[data-agent]");
		const meta = page.locator("#fleet-meta");
		const pausedIn = (n: number) => agents.slice(0, n).filter((a) => a.paused).length;
		await meta.filter({ hasText: "100 of 2,516 agents shown" }).waitFor(LIVE);
		expect(await meta.textContent()).toBe(`100 of 2,516 agents shown · 0 running · ${pausedIn(100)} paused among those shown`);
		expect(await rows.count()).toBe(100);
		// One page read for them, not a walk of the fleet.
		expect(requests.map((u) => u.searchParams.get("limit"))).toEqual(["100"]);

		await page.locator("#fleet-more").click();
		await meta.filter({ hasText: "200 of 2,516 agents shown" }).waitFor(LIVE);
		expect(await rows.count()).toBe(200);
		expect(await rows.nth(100).getAttribute("data-agent")).toBe("fleet-0100");

		// All of them: the last by name (fleet.yaml's auto-paused triage) too, and the counts are the fleet's.
		await page.locator("#fleet-all").click();
		await page.locator(`#fleet-table tr.auto-paused[data-agent="triage"]`).waitFor(LIVE);
		await meta.filter({ hasText: "2,516 agents · " }).waitFor(LIVE);
		// 26 pages shown: polled every 13 × 10 s, so the tab reads two pages each 10 s on average.
		expect(await meta.textContent()).toBe(`2,516 agents · 0 running · ${pausedIn(2516)} paused · refreshed every 2 min 10 s`);
		expect(await rows.count()).toBe(2516);
		expect(await page.locator("#fleet-more").isHidden()).toBe(true);
		expect(await page.locator("#fleet-all").isHidden()).toBe(true);
		await page.close();
	});

	it("polls the fleet only once the last load has finished, reloading just the pages shown", async () => {
		const page = await signedIn("/", tokens.read, { fakeClock: true });
		await fleetShown(page);
		const { hold } = await fakeFleet(page, 2516);
		await page.reload();
		const meta = page.locator("#fleet-meta");
		await meta.filter({ hasText: "100 of 2,516 agents shown" }).waitFor(LIVE);
		await page.locator("#fleet-more").click();
		await meta.filter({ hasText: "200 of 2,516 agents shown" }).waitFor(LIVE);
		// The page's reads of /v1/agents (their cursors), as the page makes them.
		await page.evaluate(`(() => {
			window.agentReads = [];
			const f = window.fetch;
			window.fetch = function (input, init) {
				const u = new URL(String(input), location.href);
				if (u.pathname === "/v1/agents") window.agentReads.push(u.searchParams.get("cursor"));
				return f.call(window, input, init);
			};
		})()`);
		const reads = () => page.evaluate<(string | null)[]>("window.agentReads");
		const polls = await watchTimers(page, 10_000);

		// The first poll's first page is held: however long it takes, no other load starts.
		const held = hold();
		await page.clock.runFor(10_000);
		const release = await held;
		await page.clock.runFor(60_000);
		expect(await reads()).toEqual([null]);
		await release();
		// It reads the two pages shown (not the fleet), draws them, and only then sets the next poll.
		await expect.poll(polls, LIVE).toBe(1);
		expect(await reads()).toEqual([null, "fleet-0099"]);
		expect(await page.locator("#fleet-table tbody tr[data-agent]").count()).toBe(200);
		await page.clock.runFor(9_000);
		expect(await reads()).toHaveLength(2);
		await page.clock.runFor(1_000);
		await expect.poll(polls, LIVE).toBe(2);
		expect(await reads()).toEqual([null, "fleet-0099", null, "fleet-0099"]);
		await page.close();
	});

	it("keeps the rows of a 1,000-agent fleet that a poll found unchanged, and the text selected in one, redrawing only a changed agent's, downloading only its page", async () => {
		const page = await signedIn("/", tokens.read, { fakeClock: true });
		await fleetShown(page);
		const { agents, served } = await fakeFleet(page, 1000);
		await page.reload();
		const meta = page.locator("#fleet-meta");
		await meta.filter({ hasText: "100 of 1,000 agents shown" }).waitFor(LIVE);
		await page.locator("#fleet-all").click();
		await meta.filter({ hasText: /^1,000 agents/ }).waitFor(LIVE);
		// Each row drawn so far marked, and a reader's selection of an agent's name.
		await page.evaluate(`(() => {
			for (const tr of document.querySelectorAll("#fleet-table tbody tr")) tr.dataset.before = "1";
			getSelection().selectAllChildren(document.querySelector('#fleet-table tr[data-agent="fleet-0500"] strong'));
		})()`);
		const polls = await watchTimers(page, 50_000);
		agents[3]!.paused = { by: "ops", at: new Date().toISOString(), reason: "maintenance" };
		const before = { ...served };
		await page.clock.runFor(50_000);
		await expect.poll(polls, LIVE).toBe(1);
		await page.locator('#fleet-table tr[data-agent="fleet-0003"]', { hasText: "maintenance" }).waitFor(LIVE);
		// The poll read the fleet's 10 pages of 100: the first, with the changed agent, whole; the other 9 were 304s.
		const downloaded = served.bytes - before.bytes;
		const whole = JSON.stringify(agents).length;
		console.log(`a poll of a 1,000-agent fleet shown whole, one agent changed: ${downloaded} B (the fleet's agents: ${whole} B)`);
		expect(served.unchanged - before.unchanged).toBe(9);
		expect(downloaded).toBeLessThan(whole / 5);
		const rows = page.locator("#fleet-table tbody tr");
		expect(await rows.count()).toBe(1000);
		// Only the changed agent's row is new.
		expect(await page.locator("#fleet-table tbody tr:not([data-before])").evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-agent")))).toEqual(["fleet-0003"]);
		expect(await page.evaluate<string>("getSelection().toString()")).toBe("fleet-0500");
		await page.close();
	});

	it("polls an unchanged list with the ETag of its last answer, the Worker answering 304, and shows a change at the next poll", async () => {
		const agent = await createAgent("etag-polled", {});
		await script({ text: "First." }, { text: "Second." });
		const first = await trigger(agent, "One.");
		expect(await settled(first.id)).toBe("completed");
		const page = await signedIn(`/jobs?agent=${agent}`, tokens.read, { fakeClock: true });
		const rows = page.locator("#jobs-table tbody tr[data-job]");
		await expect.poll(() => rows.count(), LIVE).toBe(1);
		const answers: { status: number; sent: string | undefined }[] = [];
		page.on("response", (res) => {
			const u = new URL(res.url());
			if (u.pathname === "/v1/jobs" && u.searchParams.get("agent") === agent) answers.push({ status: res.status(), sent: res.request().headers()["if-none-match"] });
		});
		const polls = await watchTimers(page, 10_000);
		await page.clock.runFor(10_000);
		await expect.poll(() => answers.length, LIVE).toBe(1);
		// The browser sent the tag of the answer it drew, and Chromium handed the page the bodiless 304.
		expect(answers[0]).toEqual({ status: 304, sent: expect.stringMatching(/^"[\w-]{27}"$/) });
		await expect.poll(polls, LIVE).toBe(1);
		expect(await rows.count()).toBe(1);
		const second = await trigger(agent, "Two.");
		expect(await settled(second.id)).toBe("completed");
		await page.clock.runFor(10_000);
		await expect.poll(() => rows.count(), LIVE).toBe(2);
		expect(answers[1]).toMatchObject({ status: 200 });
		await page.close();
	});

	it("keeps the incidents' rows and an agent's runs chart and rows that a poll found unchanged", async () => {
		const now = Date.now();
		const incidents = madeUpIncidents(200, "kept", now);
		const runs = Array.from({ length: 300 }, (_, i) => ({
			id: `occ-${i}`,
			schedule: "hourly",
			source: "cron",
			scheduled_instant: new Date(now - (i + 1) * 3_600_000).toISOString(),
			dispatch: "on_time",
			claimed_at: new Date(now - (i + 1) * 3_600_000 + 2_000).toISOString(),
			status: "completed",
			skip_reason: null,
			skipped_count: null,
			skipped_from: null,
			job_id: `job-2026-01-01-${String(i).padStart(6, "0")}`,
			error: null,
			delivery_outcome: null,
		}));
		const page = await signedIn("/incidents", tokens.read, { fakeClock: true });
		await page.route((u) => u.pathname === "/v1/incidents", (route) => route.fulfill({ json: { incidents, next_cursor: null } }));
		await page.route((u) => u.pathname === "/v1/agents/kept-rows/runs", (route) => route.fulfill({ json: { runs, next_cursor: null } }));
		await page.route((u) => u.pathname === "/v1/agents/kept-rows/sessions/current", (route) => route.fulfill({ status: 404, json: { error: { code: "not_found", message: "no session" } } }));
		const mark = (sel: string) => page.evaluate(`(() => { for (const el of document.querySelectorAll(${JSON.stringify(sel)})) el.dataset.before = "1"; })()`);
		const redrawn = (sel: string) => page.locator(`${sel}:not([data-before])`).count();

		await page.reload();
		await page.locator("#incidents-meta", { hasText: "200 incidents" }).waitFor(LIVE);
		await mark("#incidents-table tbody tr");
		let polls = await watchTimers(page, 10_000);
		incidents[5]!.count = 9;
		await page.clock.runFor(10_000);
		await expect.poll(polls, LIVE).toBe(1);
		await page.locator(`#incidents-table tr[data-incident="${incidents[5]!.id}"] td.num`, { hasText: "9" }).waitFor(LIVE);
		expect(await page.locator("#incidents-table tbody tr:not([data-before])").evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-incident")))).toEqual([incidents[5]!.id]);

		await page.goto(`${url}/agents/kept-rows/runs`);
		await page.locator("#runs-meta", { hasText: "300 occurrences" }).waitFor(LIVE);
		await mark("#runs-table tbody tr, #runs-chart svg");
		polls = await watchTimers(page, 10_000);
		await page.clock.runFor(10_000);
		await expect.poll(polls, LIVE).toBe(1);
		expect(await redrawn("#runs-table tbody tr")).toBe(0);
		expect(await redrawn("#runs-chart svg")).toBe(0);
		expect(await page.locator("#runs-table tbody tr").count()).toBe(300);
		await page.close();
	});

	it("rewrites only the relative times whose words changed at each 15 s refresh, keeping a selection in one that did not", async () => {
		// Three hours ago stays "3 hours ago" for a while; ten seconds ago does not.
		const ages = [3 * 3_600_000, 10_000];
		const incidents = madeUpIncidents(ages.length, "times", Date.now(), (i) => ages[i]!);
		const page = await signedIn("/incidents", tokens.read, { fakeClock: true });
		await page.route((u) => u.pathname === "/v1/incidents", (route) => route.fulfill({ json: { incidents, next_cursor: null } }));
		await page.reload();
		await page.locator("#incidents-meta", { hasText: "2 incidents" }).waitFor(LIVE);
		const old = page.locator(`#incidents-table tr[data-incident="${incidents[0]!.id}"] time.rel`).first();
		const recent = page.locator(`#incidents-table tr[data-incident="${incidents[1]!.id}"] time.rel`).first();
		expect(await old.textContent()).toBe("3 hours ago");
		const before = await recent.textContent();
		await old.evaluate((t) => (t.ownerDocument.defaultView!.getSelection()!.selectAllChildren(t)));
		// Past the page's 15 s refresh, short of its 10 s poll's second answer changing anything.
		await page.clock.runFor(15_000);
		await expect.poll(() => recent.textContent(), LIVE).not.toBe(before);
		expect(await old.textContent()).toBe("3 hours ago");
		expect(await page.evaluate<string>("getSelection().toString()")).toBe("3 hours ago");
		await page.close();
	});

	it("says a relative time that rounds up to the next unit in that unit: 1 minute ago, not 60 seconds; 1 hour ago, not 60 minutes", async () => {
		const ages = [59_600, 3_580_000, 23.6 * 3_600_000, 89_000, 5_000];
		const page = await signedIn("/incidents", tokens.read, { ownClock: true });
		const now = Date.now();
		await page.clock.setFixedTime(now);
		const incidents = madeUpIncidents(ages.length, "round", now, (i) => ages[i]!);
		await page.route((u) => u.pathname === "/v1/incidents", (route) => route.fulfill({ json: { incidents, next_cursor: null } }));
		await page.reload();
		await page.locator("#incidents-meta", { hasText: `${ages.length} incidents` }).waitFor(LIVE);
		const said = await Promise.all(incidents.map((i) => page.locator(`#incidents-table tr[data-incident="${i.id}"] time.rel`).first().textContent()));
		expect(said).toEqual(["1 minute ago", "1 hour ago", "yesterday", "1 minute ago", "5 seconds ago"]);
		await page.close();
	});

	it("keeps the text selected in an agent's persistent session, its id, across the runs page's polls", async () => {
		const now = Date.now();
		const session = { mode: "persistent", session_id: "sess-copy-me", last_job: "job-2026-01-01-000001", active_at: new Date(now - 3 * 3_600_000).toISOString(), expires_at: new Date(now + 3 * 86_400_000).toISOString(), expired: false, continues: true, not_continued_because: null };
		const page = await signedIn("/incidents", tokens.read, { fakeClock: true });
		await page.route((u) => u.pathname === "/v1/agents/kept-session/runs", (route) => route.fulfill({ json: { runs: [], next_cursor: null } }));
		await page.route((u) => u.pathname === "/v1/agents/kept-session/sessions/current", (route) => route.fulfill({ json: session }));
		await page.goto(`${url}/agents/kept-session/runs`);
		const id = page.locator("#persistent-session-text .mono", { hasText: "sess-copy-me" });
		await id.waitFor(LIVE);
		await page.evaluate(`getSelection().selectAllChildren(document.querySelector("#persistent-session-text .mono"))`);
		const polls = await watchTimers(page, 10_000);
		await page.clock.runFor(10_000);
		await expect.poll(polls, LIVE).toBe(1);
		expect(await page.evaluate<string>("getSelection().toString()")).toBe("sess-copy-me");
		// A changed session is drawn.
		session.session_id = "sess-new";
		await page.clock.runFor(10_000);
		await page.locator("#persistent-session-text .mono", { hasText: "sess-new" }).waitFor(LIVE);
		await page.close();
	});

	it("polls the whole of a large fleet less often once all of it is shown, two pages each 10 s on average", async () => {
		const page = await signedIn("/", tokens.read, { fakeClock: true });
		await fleetShown(page);
		const { requests } = await fakeFleet(page, 1000);
		await page.reload();
		const meta = page.locator("#fleet-meta");
		await meta.filter({ hasText: "100 of 1,000 agents shown" }).waitFor(LIVE);
		await page.locator("#fleet-all").click();
		await meta.filter({ hasText: /^1,000 agents · / }).waitFor(LIVE);
		expect(await meta.textContent()).toMatch(/ · refreshed every 50 s$/);
		const before = requests.length;
		const reads = () => requests.length - before;
		// The poll set while one page was shown comes as set, and walks the ten pages now shown.
		await page.clock.runFor(10_000);
		await expect.poll(reads, LIVE).toBe(10);
		// From then on, not a walk of all ten every 10 s, but one every 50 s.
		await page.clock.runFor(40_000);
		expect(reads()).toBe(10);
		await page.clock.runFor(10_000);
		await expect.poll(reads, LIVE).toBe(20);
		expect(await page.locator("#fleet-table tbody tr[data-agent]").count()).toBe(1000);
		await page.close();
	});

	it("polls again when a load never answers, after two minutes", async () => {
		const page = await signedIn("/", tokens.read, { fakeClock: true });
		await fleetShown(page);
		const { hold, requests } = await fakeFleet(page, 150);
		await page.reload();
		await page.locator("#fleet-meta").filter({ hasText: "100 of 150 agents shown" }).waitFor(LIVE);
		// The fake fleet's record of the page's reads of /v1/agents, from here on.
		const before = requests.length;
		const reads = () => requests.length - before;
		// The first poll's answer never comes (held, never released).
		const held = hold();
		await page.clock.runFor(10_000);
		await held;
		await page.clock.runFor(110_000);
		expect(await reads()).toBe(1);
		await page.clock.runFor(20_000);
		await expect.poll(reads, LIVE).toBe(2);
		await page.close();
	});

	it("keeps an agent paused on the fleet page when a poll sent before the pause answers after it", async () => {
		const agent = await createAgent(`dash-poll-${run}`, {});
		const page = await signedIn("/", tokens.operate, { fakeClock: true });
		const row = page.locator(`#fleet-table tr[data-agent="${agent}"]`);
		await row.locator(".badge", { hasText: "active" }).waitFor(LIVE);
		// Every state the row shows from here on, in order: an answer that changes the row redraws it.
		// (A string: this project's TypeScript has no DOM types; the page runs it as is.)
		await page.evaluate(`
			window.fleetStates = [];
			new MutationObserver(() => {
				const badge = document.querySelector(${JSON.stringify(`#fleet-table tr[data-agent="${agent}"] .badge`)});
				window.fleetStates.push(badge ? badge.textContent : "");
			}).observe(document.querySelector("#fleet-table tbody"), { childList: true });
		`);
		const states = () => page.evaluate<string[]>("window.fleetStates");
		const polls = await watchTimers(page, 10_000);

		// The 10 s poll's answer is held: it was read before the pause, so it says "active".
		const { held: pollHeld } = await holdFirst(page, (u) => u.pathname === "/v1/agents", (body: { agents: { name: string; paused: unknown }[] }) => body.agents.find((a) => a.name === agent)?.paused);
		await page.clock.runFor(10_000);
		const held = await pollHeld;
		expect(held.value).toBeNull();
		await row.locator("button", { hasText: "Pause" }).click();
		await page.getByRole("dialog", { name: `Pause ${agent}` }).getByRole("button", { name: "Pause", exact: true }).click();
		await page.locator("#notice", { hasText: `Paused ${agent}` }).waitFor(LIVE);
		expect(await row.locator(".badge").textContent()).toBe("paused");

		await held.release();
		// The next poll is set once the held one has finished; it draws after the held answer has
		// reached the page: wait for its redraw.
		await expect.poll(polls, LIVE).toBe(1);
		await page.clock.runFor(10_000);
		await expect.poll(polls, LIVE).toBe(2);
		const seen = await states();
		expect(seen.slice(seen.indexOf("paused"))).toEqual(Array(seen.length - seen.indexOf("paused")).fill("paused"));
		expect(await row.locator(".badge").textContent()).toBe("paused");
		await page.close();
	});

	it("shows the fleet's state, and pauses and resumes an agent", async () => {
		const agent = await createAgent(`dash-pause-${run}`, {});
		const page = await signedIn("/");
		const row = page.locator(`#fleet-table tr[data-agent="${agent}"]`);
		await row.waitFor(LIVE);
		// Pause asks first, with an optional one-line reason that has the focus: Escape and Cancel pause
		// nothing, a refusal is said in the dialog (escaped), and Enter pauses with the reason given.
		const pauses: unknown[] = [];
		page.on("request", (r) => {
			if (r.method() === "POST" && r.url().endsWith(`/v1/agents/${agent}/pause`)) pauses.push(r.postDataJSON());
		});
		const ask = page.getByRole("dialog", { name: `Pause ${agent}` });
		const reason = ask.getByLabel("Reason (optional)");
		await row.locator("button", { hasText: "Pause" }).click();
		await ask.waitFor();
		expect(await reason.evaluate((el) => el === (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement)).toBe(true);
		expect(await ask.textContent()).toContain("Its due runs are skipped");
		await page.keyboard.press("Escape");
		await ask.waitFor({ state: "hidden" });
		await row.locator("button", { hasText: "Pause" }).click();
		await ask.getByRole("button", { name: "Cancel" }).click();
		await ask.waitFor({ state: "hidden" });
		expect(pauses).toEqual([]);
		await page.route((u) => u.pathname === `/v1/agents/${agent}/pause`, (route) => route.fulfill({ status: 409, json: { error: { code: "conflict", message: "refused: evil\u202egpj.exe" } } }), { times: 1 });
		await row.locator("button", { hasText: "Pause" }).click();
		await reason.fill("vendor outage");
		await reason.press("Enter");
		await ask.getByRole("alert").filter({ hasText: "refused: evil\\u202egpj.exe" }).waitFor(LIVE);
		expect(await reason.inputValue()).toBe("vendor outage");
		expect(await row.locator(".badge", { hasText: "paused" }).count()).toBe(0);
		await reason.press("Enter");
		await row.locator(".badge", { hasText: "paused" }).waitFor(LIVE);
		await ask.waitFor({ state: "hidden" });
		expect(pauses).toEqual([{ reason: "vendor outage" }, { reason: "vendor outage" }]);
		expect((await call<{ paused: { reason: string } | null }>("GET", `/v1/agents/${agent}`, tokens.read)).paused).toMatchObject({ reason: "vendor outage" });
		expect(await row.textContent()).toContain("vendor outage");
		// An agent that cannot run shows auto-paused: fleet.yaml's triage, whose tool's secret is not set here.
		await page.locator("#fleet-table tr.auto-paused").first().waitFor(LIVE);
		// Said once, by the badge: the reason shown drops the API's "auto: " prefix.
		const autoReason = (await page.locator("#fleet-table tr.auto-paused .reason").first().textContent())!;
		expect(autoReason).not.toMatch(/^auto:/);
		expect(autoReason).toMatch(/is not set|is retired/);
		await shot(page, "fleet");
		await row.locator("button", { hasText: "Resume" }).click();
		await row.locator(".badge", { hasText: "active" }).waitFor(LIVE);
		// Resuming an agent that cannot run says it is still paused, and why; it does not claim success.
		const stuck = page.locator("#fleet-table tr.auto-paused").first();
		const stuckName = (await stuck.getAttribute("data-agent"))!;
		await stuck.locator("button", { hasText: "Resume" }).click();
		await page.locator("#notice", { hasText: `agent ${stuckName} cannot run: ` }).waitFor(LIVE);
		expect(await page.locator("#notice").textContent()).not.toContain("Resumed");
		await page.locator(`#fleet-table tr.auto-paused[data-agent="${stuckName}"]`).waitFor(LIVE);
		await page.close();
		expect(pageErrors).toEqual([]);
	});

	it("offers a read-only token no action it would be refused, and an operate token each one", async () => {
		const { agent, job: done } = await completedJob(`dash-roles-${run}`);
		const reader = await signedIn("/", tokens.read);
		await reader.locator('body[data-role="read"]').waitFor({ ...LIVE, state: "attached" });
		const row = reader.locator(`#fleet-table tr[data-agent="${agent}"]`);
		await row.waitFor(LIVE);
		expect(await row.locator("button", { hasText: /Run now|Pause|Resume/ }).count()).toBeGreaterThan(0);
		expect(await row.locator("button:visible").count()).toBe(0);
		await reader.goto(`${url}/jobs/${done.id}`);
		await reader.locator("#job-download").waitFor(LIVE);
		expect(await reader.locator("#job-fork").isVisible()).toBe(false);
		expect(await reader.locator("#job-continue").isVisible()).toBe(false);
		expect(await reader.locator("#job-download").isVisible()).toBe(true);
		await reader.close();

		const operator = await signedIn(`/jobs/${done.id}`, tokens.operate);
		await operator.locator('body[data-role="operate"]').waitFor({ ...LIVE, state: "attached" });
		await operator.locator("#job-fork").waitFor(LIVE);
		await operator.locator("#job-continue").waitFor(LIVE);
		await operator.close();
		expect(pageErrors).toEqual([]);
	});

	it("shows a read-only token no Actions column in the fleet, and a waiting approval's input as text with nothing to decide", async () => {
		const { agent, job } = await awaitingApproval(`dash-read-approval-${run}`, { text: "Not filed." });
		const columns = ["Agent", "State", "Schedules · next run", "Running", "Last job"];
		const asked = JSON.stringify({ title: "Disk full" }, null, 2);

		const reader = await signedIn("/", tokens.read);
		await reader.locator('body[data-role="read"]').waitFor({ ...LIVE, state: "attached" });
		const readerRow = reader.locator(`#fleet-table tr[data-agent="${agent}"]`);
		await readerRow.waitFor(LIVE);
		expect(await reader.locator("#fleet-table thead th:visible").allTextContents()).toEqual(columns);
		expect(await readerRow.locator("td:visible").count()).toBe(columns.length);
		await reader.goto(`${url}/jobs/${job.id}`);
		const readerPanel = reader.locator("#job-approval");
		await readerPanel.waitFor({ state: "visible", ...LIVE });
		await reader.locator('body[data-role="read"]').waitFor({ ...LIVE, state: "attached" });
		expect(await readerPanel.locator("textarea:visible, button:visible").count()).toBe(0);
		expect(await reader.locator("#approval-input-text").textContent()).toBe(asked);
		expect(await readerPanel.getByText("Deciding takes an operate or admin token.").isVisible()).toBe(true);
		expect(await readerPanel.getByText("Edit the input if needed").isVisible()).toBe(false);
		await shot(reader, "job-approval-read");
		await reader.close();

		const operator = await signedIn("/", tokens.operate);
		await operator.locator('body[data-role="operate"]').waitFor({ ...LIVE, state: "attached" });
		const operatorRow = operator.locator(`#fleet-table tr[data-agent="${agent}"]`);
		await operatorRow.waitFor(LIVE);
		expect(await operator.locator("#fleet-table thead th:visible").allTextContents()).toEqual([...columns, "Actions"]);
		expect(await operatorRow.locator("td:visible").count()).toBe(columns.length + 1);
		await operator.goto(`${url}/jobs/${job.id}`);
		await operator.locator("#approval-approve").waitFor({ state: "visible", ...LIVE });
		expect(await operator.locator("#approval-input").inputValue()).toBe(asked);
		expect(await operator.locator("#approval-deny").isVisible()).toBe(true);
		expect(await operator.locator("#approval-input-text").isVisible()).toBe(false);
		expect(await operator.getByText("Deciding takes an operate or admin token.").isVisible()).toBe(false);
		await operator.close();
		await call("POST", `/v1/jobs/${job.id}/approval`, tokens.operate, { decision: "deny" });
		expect(await settled(job.id)).toBe("completed");
		expect(pageErrors).toEqual([]);
	});

	it("says a job does not exist on its page, with no empty record or live buttons left", async () => {
		const page = await signedIn("/jobs/job-2026-01-01-zzzzzz");
		await page.locator("#notice", { hasText: "no job job-2026-01-01-zzzzzz" }).waitFor(LIVE);
		expect(await page.locator("#job-download").isVisible()).toBe(false);
		expect(await page.locator("#job-facts").isVisible()).toBe(false);
		await page.close();
	});

	it("asks for a prompt to run an agent that has none of its own, and runs nothing when the dialog is cancelled or the prompt left blank", async () => {
		const agent = await createAgent(`dash-no-prompt-${run}`, { prompt: undefined });
		const page = await signedIn("/");
		const row = page.locator(`#fleet-table tr[data-agent="${agent}"]`);
		await row.waitFor(LIVE);
		const dialog = page.getByRole("dialog", { name: `Run ${agent} now` });
		const prompt = dialog.getByLabel("Prompt", { exact: true });
		const runIt = dialog.getByRole("button", { name: "Run", exact: true });
		await row.getByRole("button", { name: `Run now: ${agent}` }).click();
		expect(await dialog.textContent()).toContain("has no default prompt");
		await dialog.getByRole("button", { name: "Cancel" }).click();
		await dialog.waitFor({ state: "hidden" });
		// A blank prompt is none: the dialog says so, and stays open.
		await row.getByRole("button", { name: `Run now: ${agent}` }).click();
		await prompt.fill("   \n  ");
		await runIt.click();
		await dialog.getByRole("alert").filter({ hasText: `A prompt is needed to run ${agent}` }).waitFor(LIVE);
		// Said with the field too, which has the focus back and is marked wrong until it is edited.
		expect(await page.evaluate<string | undefined>("document.activeElement?.tagName")).toBe("TEXTAREA");
		expect(await accessibleDescription(page, "dialog[open] textarea")).toContain(`A prompt is needed to run ${agent}: it has no default prompt.`);
		expect(await prompt.getAttribute("aria-invalid")).toBe("true");
		await prompt.fill("Summarise the open bugs");
		expect(await prompt.getAttribute("aria-invalid")).toBeNull();
		await runIt.click();
		await page.waitForURL(/\/jobs\/job-/, LIVE);
		const id = decodeURIComponent(new URL(page.url()).pathname.split("/").pop()!);
		expect(await call<{ prompt: string; trigger_type: string }>("GET", `/v1/jobs/${id}`, tokens.read)).toMatchObject({ prompt: "Summarise the open bugs", trigger_type: "manual" });
		// The cancelled and the blank question sent nothing: this is the agent's only job.
		expect((await call<{ jobs: { id: string }[] }>("GET", `/v1/agents/${agent}/jobs`, tokens.read)).jobs.map((j) => j.id)).toEqual([id]);
		await page.close();
	});

	it("opens the page of a job it has just run while the API cannot find the job yet (its index row waiting for D1), saying so, then shows it", async () => {
		const agent = await createAgent(`dash-run-unlisted-${run}`, {});
		await script({ text: "Listed at last." });
		const page = await signedIn("/");
		// The new job's first two reads find no index row, as while D1 refuses its agent's write.
		let refused = 0;
		await page.route(/\/v1\/jobs\/job-[^/?]+$/, async (route) => {
			if (route.request().method() === "GET" && refused < 2) {
				refused++;
				const id = decodeURIComponent(new URL(route.request().url()).pathname.split("/").pop()!);
				await route.fulfill({ status: 404, contentType: "application/json", body: JSON.stringify({ error: { code: "not_found", message: `no job ${id}` } }) });
				return;
			}
			await route.fallback();
		});
		const row = page.locator(`#fleet-table tr[data-agent="${agent}"]`);
		await row.getByRole("button", { name: `Run now: ${agent}` }).click();
		await page.getByRole("dialog", { name: `Run ${agent} now` }).getByRole("button", { name: "Run", exact: true }).click();
		await page.waitForURL(/\/jobs\/job-/, LIVE);
		await page.locator("#notice", { hasText: "is not listed yet" }).waitFor(LIVE);
		await page.locator("#job-log li.t-assistant", { hasText: "Listed at last." }).waitFor(LIVE);
		expect(refused).toBe(2);
		expect(await page.locator("#job-facts").isVisible()).toBe(true);
		expect(await page.locator("#notice").isVisible()).toBe(false);
		expect(await page.title()).not.toContain("not found");
		await page.close();
	});

	it("runs an agent now from a dialog: the prompt field has the focus, Escape and Cancel run nothing, a refused prompt is said in the dialog, Ctrl+Enter runs a multi-line prompt, and an empty one the default", async () => {
		expect(await emulatorQueued()).toBe(0);
		const agent = await createAgent(`dash-run-now-${run}`, {});
		const jobsOf = async () => (await call<{ jobs: { id: string }[] }>("GET", `/v1/agents/${agent}/jobs`, tokens.read)).jobs.map((j) => j.id);
		const page = await signedIn("/");
		const row = page.locator(`#fleet-table tr[data-agent="${agent}"]`);
		await row.waitFor(LIVE);
		const runNow = row.getByRole("button", { name: `Run now: ${agent}` });
		const dialog = page.getByRole("dialog", { name: `Run ${agent} now` });
		const prompt = dialog.getByLabel("Prompt (optional)");
		const runIt = dialog.getByRole("button", { name: "Run", exact: true });
		// (The page's document, typed here: no DOM types in this project.)
		const focused = () => prompt.evaluate((el) => el === (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement);
		const posts: unknown[] = [];
		page.on("request", (r) => {
			if (r.method() === "POST" && r.url().endsWith(`/v1/agents/${agent}/jobs`)) posts.push(r.postDataJSON());
		});

		// Escape closes it, Cancel too: nothing is sent, and each opening starts empty.
		await runNow.click();
		await dialog.waitFor();
		expect(await focused()).toBe(true);
		expect(await dialog.textContent()).toContain("Empty runs the agent's default prompt.");
		await prompt.fill("Not this one.");
		await page.keyboard.press("Escape");
		await dialog.waitFor({ state: "hidden" });
		await runNow.click();
		expect(await prompt.inputValue()).toBe("");
		await dialog.getByRole("button", { name: "Cancel" }).click();
		await dialog.waitFor({ state: "hidden" });
		expect(posts).toEqual([]);

		// The API refuses the prompt (a 400): its message is said in the dialog, which stays open with the text as typed.
		const refused = "Tidy up.\nThen run rm -rf / to be sure.";
		await runNow.click();
		await prompt.fill(refused);
		await runIt.click();
		await dialog.getByRole("alert").filter({ hasText: "prompt refused by the injection scan: prompt injection pattern: rm -rf /" }).waitFor(LIVE);
		expect(await prompt.inputValue()).toBe(refused);
		expect(await focused()).toBe(true);
		expect(await runIt.isEnabled()).toBe(true);
		expect(await page.locator("#notice").isVisible()).toBe(false);
		expect(await jobsOf()).toEqual([]);
		await shot(page, "run-now");

		// Ctrl+Enter in the field runs it, with every line of the prompt; the new job's page opens.
		const multi = "Check the deploys.\n\nThen summarise them in two lines.";
		await script({ text: "Two lines." });
		await prompt.fill(multi);
		await prompt.press("Control+Enter");
		await page.waitForURL(/\/jobs\/job-/, LIVE);
		const first = new URL(page.url()).pathname.split("/").at(-1)!;
		await page.locator("#job-prompt", { hasText: "Then summarise them in two lines." }).waitFor(LIVE);
		expect(await getJob(first)).toMatchObject({ agent, prompt: multi });
		expect(await settled(first)).toBe("completed");

		// Left empty: the agent's default prompt (no prompt sent).
		await page.goto(`${url}/`);
		await script({ text: "Done." });
		await runNow.click();
		await runIt.click();
		await page.waitForURL((u) => /\/jobs\/job-/.test(u.pathname) && !u.pathname.endsWith(first), LIVE);
		const second = new URL(page.url()).pathname.split("/").at(-1)!;
		await page.locator("#job-prompt", { hasText: "Do the thing." }).waitFor(LIVE);
		expect(await settled(second)).toBe("completed");
		expect(posts).toEqual([{ prompt: refused }, { prompt: multi }, {}]);
		expect((await jobsOf()).sort()).toEqual([first, second].sort());
		await page.close();
	});

	it("starts one job when Run now, or a job's Continue, is pressed again after its answer was lost: the dialog sends its first press's Idempotency-Key again", async () => {
		const agent = await createAgent(`dash-run-lost-${run}`, {});
		const jobsOf = async () => (await call<{ jobs: { id: string }[] }>("GET", `/v1/agents/${agent}/jobs`, tokens.read)).jobs.map((j) => j.id);
		const page = await signedIn("/");
		const keys: (string | undefined)[] = [];
		let dropped = 0;
		// The first press reaches the Worker, which starts the job; its answer is lost on the way back.
		const dropFirst = async (route: Route) => {
			if (route.request().method() !== "POST") return route.fallback();
			keys.push(route.request().headers()["idempotency-key"]);
			if (dropped++ % 2 === 1) return route.fallback();
			await route.fetch();
			return route.abort("connectionreset");
		};
		await page.route(`**/v1/agents/${agent}/jobs`, dropFirst);
		const row = page.locator(`#fleet-table tr[data-agent="${agent}"]`);
		await row.waitFor(LIVE);
		const dialog = page.getByRole("dialog", { name: `Run ${agent} now` });
		await script({ text: "Once." });
		await row.getByRole("button", { name: `Run now: ${agent}` }).click();
		await dialog.getByLabel("Prompt (optional)").fill("Check once.");
		await dialog.getByRole("button", { name: "Run", exact: true }).click();
		await dialog.getByRole("alert").filter({ hasText: "The drover server is unreachable" }).waitFor(LIVE);
		const [first] = await jobsOf();
		expect(first).toBeDefined();
		await dialog.getByRole("button", { name: "Run", exact: true }).click();
		await page.waitForURL(/\/jobs\/job-/, LIVE);
		expect(new URL(page.url()).pathname).toBe(`/jobs/${first}`);
		expect(await jobsOf()).toEqual([first]);
		expect(keys).toHaveLength(2);
		expect(keys[0]).toMatch(/^dashboard-[0-9a-f]{32}$/);
		expect(keys[1]).toBe(keys[0]);
		expect(await settled(first!)).toBe("completed");

		// A job's Continue likewise.
		await page.route(`**/v1/jobs/${first}/continue`, dropFirst);
		await script({ text: "Twice." });
		await page.locator("#job-continue").click();
		const follow = page.getByRole("dialog", { name: `Continue ${first}` });
		await follow.getByLabel("Prompt").fill("And again?");
		await follow.getByRole("button", { name: "Continue", exact: true }).click();
		await follow.getByRole("alert").filter({ hasText: "The drover server is unreachable" }).waitFor(LIVE);
		expect(await jobsOf()).toHaveLength(2);
		await follow.getByRole("button", { name: "Continue", exact: true }).click();
		await page.waitForURL((u) => /\/jobs\/job-/.test(u.pathname) && !u.pathname.endsWith(first!), LIVE);
		const second = new URL(page.url()).pathname.split("/").at(-1)!;
		expect((await jobsOf()).sort()).toEqual([first, second].sort());
		expect(keys).toHaveLength(4);
		expect(keys[3]).toBe(keys[2]);
		expect(keys[2]).not.toBe(keys[0]);
		expect(await settled(second)).toBe("completed");
		await page.close();
	});

	it("signs in when /v1/status fails (an invalid fleet.yaml): the token is checked on the job list, and the missing pill is explained", async () => {
		const page = await open("/");
		await page.locator("#signin").waitFor({ state: "visible" });
		const asked: string[] = [];
		page.on("request", (r) => {
			const u = new URL(r.url());
			if (u.pathname.startsWith("/v1/")) asked.push(u.pathname + u.search);
		});
		await page.route((u) => u.pathname === "/v1/status", (route) =>
			route.fulfill({ status: 500, contentType: "application/json", body: JSON.stringify({ error: { code: "config_invalid", message: "fleet.yaml is invalid: agents[0].model is required" } }) }),
		);
		await page.locator("#token").fill(tokens.read);
		await page.locator("#signin-form button[type=submit]").click();
		await page.locator("#view").waitFor({ state: "visible", ...LIVE });
		await fleetShown(page);
		await page.locator("#notice", { hasText: "fleet.yaml is invalid" }).waitFor(LIVE);
		expect(await page.locator("#scheduler-pill").isHidden()).toBe(true);
		expect(await page.locator("#signin").isHidden()).toBe(true);
		expect(asked[0]).toBe("/v1/jobs?limit=1");
		expect(await page.evaluate(() => sessionStorage.getItem("drover.token"))).toBe(tokens.read);
		await page.close();
	});

	it("asks before forking a job: Escape and Cancel fork nothing, a refusal is said in the dialog (escaped), and Ctrl+Enter forks with the prompt given", async () => {
		expect(await emulatorQueued()).toBe(0);
		const agent = await createAgent(`dash-fork-ask-${run}`, {});
		await script({ text: "First answer." });
		const job = await trigger(agent);
		expect(await settled(job.id)).toBe("completed");
		const page = await signedIn(`/jobs/${job.id}`);
		const fork = page.locator("#job-fork");
		await fork.waitFor({ state: "visible", ...LIVE });
		const dialog = page.getByRole("dialog", { name: `Fork ${job.id}` });
		const prompt = dialog.getByLabel("Prompt (optional)");
		const forkIt = dialog.getByRole("button", { name: "Fork", exact: true });
		// (The page's document, typed here: no DOM types in this project.)
		const focused = () => prompt.evaluate((el) => el === (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement);
		const bodies: unknown[] = [];
		page.on("request", (r) => {
			if (r.method() === "POST" && r.url().endsWith(`/v1/jobs/${job.id}/fork`)) bodies.push(r.postDataJSON());
		});

		// Asked first: Escape and Cancel fork nothing.
		await fork.click();
		await dialog.waitFor();
		expect(await focused()).toBe(true);
		expect(await dialog.textContent()).toContain("A new job starts at once from this job's conversation");
		await page.keyboard.press("Escape");
		await dialog.waitFor({ state: "hidden" });
		await fork.click();
		await dialog.getByRole("button", { name: "Cancel" }).click();
		await dialog.waitFor({ state: "hidden" });
		expect(bodies).toEqual([]);

		// A refusal is said in the dialog, with its controls shown as escapes: it stays open with the prompt.
		await fork.click();
		await prompt.fill("Now rm -rf / please.");
		await forkIt.click();
		await dialog.getByRole("alert").filter({ hasText: "prompt refused by the injection scan: prompt injection pattern: rm -rf /" }).waitFor(LIVE);
		expect(await prompt.inputValue()).toBe("Now rm -rf / please.");
		await page.route((u) => u.pathname === `/v1/jobs/${job.id}/fork`, (route) => route.fulfill({ status: 409, json: { error: { code: "conflict", message: "refused: evil\u202egpj.exe" } } }), { times: 1 });
		await prompt.fill("Once more.");
		await forkIt.click();
		await dialog.getByRole("alert").filter({ hasText: "refused: evil\\u202egpj.exe" }).waitFor(LIVE);
		expect(await focused()).toBe(true);

		// Ctrl+Enter forks, with every line of the prompt given; the new job's page opens.
		const more = "Say it again,\nshorter.";
		await script({ text: "Shorter." });
		await prompt.fill(more);
		await prompt.press("Control+Enter");
		await page.waitForURL((u) => /\/jobs\/job-/.test(u.pathname) && !u.pathname.endsWith(job.id), LIVE);
		const forkId = new URL(page.url()).pathname.split("/").at(-1)!;
		await page.locator("#job-facts dd a", { hasText: job.id }).waitFor(LIVE);
		await page.locator("#job-prompt", { hasText: "shorter." }).waitFor(LIVE);
		expect(await settled(forkId)).toBe("completed");
		expect(await call<{ prompt: string; forked_from: string }>("GET", `/v1/jobs/${forkId}`, tokens.read)).toMatchObject({ prompt: more, forked_from: job.id });
		expect(bodies).toEqual([{ prompt: "Now rm -rf / please." }, { prompt: "Once more." }, { prompt: more }]);
		await page.close();
	});

	it("forks under a changed definition only when asked: a 409 is put as a question in the dialog, and yes retries with allow_definition_change", async () => {
		const agent = await createAgent(`dash-fork-def-${run}`, {});
		await script({ text: "First run." });
		const job = await trigger(agent);
		expect(await settled(job.id)).toBe("completed");
		// The agent changes after the job ran.
		await call("PUT", `/v1/agents/${agent}`, tokens.admin, { name: agent, prompt: "Do the other thing.", timeout: "5m" });
		const page = await signedIn(`/jobs/${job.id}`);
		await page.locator("#job-fork").waitFor({ state: "visible", ...LIVE });
		const bodies: unknown[] = [];
		page.on("request", (r) => {
			if (r.method() === "POST" && r.url().endsWith(`/v1/jobs/${job.id}/fork`)) bodies.push(r.postDataJSON());
		});
		const dialog = page.getByRole("dialog", { name: `Fork ${job.id}` });
		const anyway = dialog.getByRole("button", { name: "Fork under the new definition" });
		// No: nothing is forked.
		await page.locator("#job-fork").click();
		await dialog.getByRole("button", { name: "Fork", exact: true }).click();
		await dialog.getByRole("alert").filter({ hasText: "The agent's definition changed since this job ran. Fork under the new definition?" }).waitFor(LIVE);
		await anyway.waitFor();
		await shot(page, "fork-definition-changed");
		await dialog.getByRole("button", { name: "Cancel" }).click();
		await dialog.waitFor({ state: "hidden" });
		expect(bodies).toEqual([{}]);
		// Yes: forked under the new definition.
		await script({ text: "Forked run." });
		await page.locator("#job-fork").click();
		await dialog.getByRole("button", { name: "Fork", exact: true }).click();
		await anyway.click();
		await page.waitForURL((u) => /\/jobs\/job-/.test(u.pathname) && !u.pathname.endsWith(job.id), LIVE);
		expect(bodies).toEqual([{}, {}, { allow_definition_change: true }]);
		const forkId = new URL(page.url()).pathname.split("/").at(-1)!;
		expect(await settled(forkId)).toBe("completed");
		expect(await call<{ forked_from: string }>("GET", `/v1/jobs/${forkId}`, tokens.read)).toMatchObject({ forked_from: job.id });
		await page.close();
	});

	it("says until when a running job waits out a rate limit, where it said only running", async () => {
		const agent = await createAgent(`dash-limited-${run}`, { timeout: "30m" });
		await script({ error: 429, retry_after: 300 });
		const job = await trigger(agent);
		const page = await signedIn(`/jobs/${job.id}`, tokens.operate, { fakeClock: true });
		const fact = page.locator("#job-facts dt", { hasText: /^Rate limited$/ }).locator("xpath=following-sibling::dd[1]");
		await fact.waitFor(LIVE);
		expect(await fact.textContent()).toMatch(/^waiting: the next model call in [45] minutes$/);
		expect(await page.locator("#job-status").textContent()).toContain("running");
		// Its end passed (the call it ends in under way, the record not yet changed): the fact goes, not "… ago".
		await page.clock.runFor(301_000);
		await page.locator("#job-facts dt", { hasText: /^Rate limited$/ }).waitFor({ ...LIVE, state: "detached" });
		expect(await page.locator("#job-status").textContent()).toContain("running");
		await call("POST", `/v1/jobs/${job.id}/cancel`, tokens.operate, { reason: "test over" });
		await page.close();
	});

	it("offers no Fork or Continue on a job whose agent was deleted (the API would refuse both), and says why", async () => {
		const agent = await createAgent(`dash-fork-gone-${run}`, {});
		await script({ text: "Last words." });
		const job = await trigger(agent);
		expect(await settled(job.id)).toBe("completed");
		await call("DELETE", `/v1/agents/${agent}`, tokens.admin);
		const page = await signedIn(`/jobs/${job.id}`);
		await page.getByText("Its agent was deleted: it cannot be forked or continued.").waitFor(LIVE);
		expect(await page.locator("#job-actions button:visible").allTextContents()).toEqual(["Download JSONL"]);
		// The job itself stays readable.
		await page.locator("#job-summary", { hasText: "Last words." }).waitFor(LIVE);
		await page.close();
	});

	it("continues a finished job from a dialog: a blank prompt and a paused agent are said there, a changed definition is asked, and the new job in the same session opens", async () => {
		expect(await emulatorQueued()).toBe(0);
		const agent = await createAgent(`dash-continue-${run}`, {});
		await script({ text: "First answer." });
		const job = await trigger(agent);
		expect(await settled(job.id)).toBe("completed");
		const { session_id: session } = await call<{ session_id: string }>("GET", `/v1/jobs/${job.id}`, tokens.read);
		expect(session).toBeTruthy();
		const page = await signedIn(`/jobs/${job.id}`);
		const button = page.locator("#job-continue");
		await button.waitFor({ state: "visible", ...LIVE });
		// Beside Fork.
		expect(await page.locator("#job-actions button:visible").allTextContents()).toEqual(["Download JSONL", "Fork", "Continue"]);
		const bodies: unknown[] = [];
		page.on("request", (r) => {
			if (r.method() === "POST" && r.url().endsWith(`/v1/jobs/${job.id}/continue`)) bodies.push(r.postDataJSON());
		});
		const dialog = page.getByRole("dialog", { name: `Continue ${job.id}` });
		const prompt = dialog.getByLabel("Prompt", { exact: true });
		const go = dialog.getByRole("button", { name: "Continue", exact: true });

		// The prompt is required: a blank one is said in the dialog, and nothing is sent.
		await button.click();
		await dialog.waitFor();
		expect(await dialog.textContent()).toContain("A new job starts at once in this job's session");
		await prompt.fill("  \n ");
		await go.click();
		await dialog.getByRole("alert").filter({ hasText: `A prompt is needed to continue ${job.id}.` }).waitFor(LIVE);
		expect(bodies).toEqual([]);
		// A paused agent's refusal is said in the dialog, which stays open with the prompt.
		await call("POST", `/v1/agents/${agent}/pause`, tokens.operate, { reason: "held for the test" });
		await prompt.fill("And then?");
		await prompt.press("Control+Enter");
		await dialog.getByRole("alert").filter({ hasText: `agent ${agent} is paused: held for the test` }).waitFor(LIVE);
		expect(await prompt.inputValue()).toBe("And then?");
		// Resumed, and changed since the job ran: asked in the dialog, and yes continues anyway.
		await call("POST", `/v1/agents/${agent}/resume`, tokens.operate);
		await call("PUT", `/v1/agents/${agent}`, tokens.admin, { name: agent, prompt: "Do the other thing.", timeout: "5m" });
		await go.click();
		await dialog.getByRole("alert").filter({ hasText: "The agent's definition changed since this job ran. Continue under the new definition?" }).waitFor(LIVE);
		await script({ text: "Then this." });
		await dialog.getByRole("button", { name: "Continue under the new definition" }).click();
		await page.waitForURL((u) => /\/jobs\/job-/.test(u.pathname) && !u.pathname.endsWith(job.id), LIVE);
		const nextId = new URL(page.url()).pathname.split("/").at(-1)!;
		await page.locator("#job-prompt", { hasText: "And then?" }).waitFor(LIVE);
		expect(bodies).toEqual([{ prompt: "And then?" }, { prompt: "And then?" }, { prompt: "And then?", allow_definition_change: true }]);
		expect(await settled(nextId)).toBe("completed");
		expect(await call<{ trigger_type: string; session_id: string; prompt: string }>("GET", `/v1/jobs/${nextId}`, tokens.read)).toMatchObject({ trigger_type: "continue", session_id: session, prompt: "And then?" });
		// The new job's facts link back to the job it continued.
		const from = page.locator("#job-facts dt", { hasText: "Continued from" });
		await from.waitFor(LIVE);
		expect(await page.locator("#job-facts dt:has-text('Continued from') + dd a").getAttribute("href")).toBe(`/jobs/${job.id}`);
		await page.close();
		expect(pageErrors).toEqual([]);
	});

	it("offers no Fork or Continue for a job cancelled before it started (it has no conversation)", async () => {
		expect(await emulatorQueued()).toBe(0);
		const agent = await createAgent(`dash-never-started-${run}`, { tools: [TICKET_TOOL], max_concurrent: 1 });
		// The first run waits on an approval and holds the agent's one place; the second stays queued.
		await script({ tool_use: { name: "create_ticket", input: { title: "Hold" } } });
		const holder = await trigger(agent);
		await expect.poll(async () => (await getJob(holder.id)).status, LIVE).toBe("approval_pending");
		const queued = await trigger(agent);
		expect((await getJob(queued.id)).status).toBe("pending");
		await call("POST", `/v1/jobs/${queued.id}/cancel`, tokens.operate, {});
		await call("POST", `/v1/jobs/${holder.id}/cancel`, tokens.operate, {});
		expect(await getJob(queued.id)).toMatchObject({ status: "cancelled", started_at: null });
		const page = await signedIn(`/jobs/${queued.id}`);
		await page.locator("#job-status", { hasText: "cancelled" }).waitFor(LIVE);
		expect(await page.locator("#job-actions button:visible").allTextContents()).toEqual(["Download JSONL"]);
		await page.close();
		expect(pageErrors).toEqual([]);
	});

	it("keeps a dialog open while its request is under way, however often Escape is pressed, so the outcome is said in it", async () => {
		const agent = await createAgent(`dash-busy-${run}`, {});
		await script({ text: "First answer." });
		const job = await trigger(agent);
		expect(await settled(job.id)).toBe("completed");
		const page = await signedIn(`/jobs/${job.id}`);
		await page.locator("#job-fork").waitFor({ state: "visible", ...LIVE });
		// The fork's answer waits for the test's word.
		let answer!: () => void;
		const answered = new Promise<void>((resolve) => (answer = resolve));
		const sent: unknown[] = [];
		await page.route(
			(u) => u.pathname === `/v1/jobs/${job.id}/fork`,
			async (route) => {
				sent.push(route.request().postDataJSON());
				await answered;
				await route.fulfill({ status: 409, json: { error: { code: "conflict", message: "refused late: evil\u202egpj.exe" } } });
			},
		);
		const dialog = page.getByRole("dialog", { name: `Fork ${job.id}` });
		const prompt = dialog.getByLabel("Prompt (optional)");
		await page.locator("#job-fork").click();
		await prompt.fill("Again.");
		await dialog.getByRole("button", { name: "Fork", exact: true }).click();
		await expect.poll(() => sent.length, LIVE).toBe(1);
		expect(await dialog.getByRole("button", { name: "Fork", exact: true }).isDisabled()).toBe(true);
		for (let i = 0; i < 4; i++) await page.keyboard.press("Escape");
		expect(await dialog.isVisible()).toBe(true);
		expect(await dialog.getByRole("button", { name: "Cancel" }).isDisabled()).toBe(true);
		// Answered: the refusal is said in the dialog, still open with the prompt; Escape closes it now.
		answer();
		await dialog.getByRole("alert").filter({ hasText: "refused late: evil\\u202egpj.exe" }).waitFor(LIVE);
		expect(await prompt.inputValue()).toBe("Again.");
		expect(await page.locator("#notice").isVisible()).toBe(false);
		await page.keyboard.press("Escape");
		await dialog.waitFor({ state: "hidden" });
		expect(sent).toEqual([{ prompt: "Again." }]);
		expect(page.url()).toBe(`${url}/jobs/${job.id}`);
		await page.close();
	});

	it("marks a log line that was cut to fit storage", async () => {
		const agent = await createAgent(`dash-cut-${run}`, {});
		await script({ text: "Short." });
		const job = await trigger(agent);
		expect(await settled(job.id)).toBe("completed");
		const page = await open(`/jobs/${job.id}`);
		// The stream as the Worker sends it for a line stored cut short.
		const cut = JSON.stringify({ type: "assistant", content: "A very long answer…", timestamp: new Date().toISOString(), truncated: { field: "content", bytes: 3_145_728 } });
		const whole = JSON.stringify({ type: "assistant", content: "A short answer.", timestamp: new Date().toISOString() });
		await page.route((u) => u.pathname === `/v1/jobs/${job.id}/stream`, (route) =>
			route.fulfill({ status: 200, contentType: "text/event-stream", body: `id: 1\nevent: line\ndata: ${cut}\n\nid: 2\nevent: line\ndata: ${whole}\n\nevent: end\ndata: {"status":"completed"}\n\n` }),
		);
		await page.locator("#token").fill(tokens.read);
		await page.locator("#signin-form button[type=submit]").click();
		await page.locator("#log-state", { hasText: "ended" }).waitFor(LIVE);
		expect(await page.locator("#job-log li[data-line='1'] .cut").textContent()).toContain("cut to fit: the line was 3,145,728 bytes");
		expect(await page.locator("#job-log li[data-line='2'] .cut").count()).toBe(0);
		await page.close();
	});

	it("fits a phone's screen: no page scrolls sideways, the top bar wraps with Sign out on it, and tables, log lines and charts stay readable", async () => {
		// An agent with the longest name allowed, and a job of it with a long answer.
		const agent = await createAgent(`dash-wide-${run}-`.padEnd(63, "x"), {});
		await script({ text: "A long answer. ".repeat(30) });
		const job = await trigger(agent);
		expect(await settled(job.id)).toBe("completed");
		// An agent's runs for the timeline and the table, a skipped one's note among them.
		const scheduled = await scheduledRuns(`dash-phone-runs-${run}`);
		const page = await signedIn("/");
		/** What a person on this screen sees of the page's frame. (A string: no DOM types here.) */
		const frame = () =>
			page.evaluate<{ scrollWidth: number; innerWidth: number; signOut: { left: number; right: number; bottom: number }; barBottom: number; wide: string[] }>(`(() => {
				const box = (sel) => document.querySelector(sel).getBoundingClientRect();
				const out = box("#sign-out");
				// For the failure's message: what sticks out past the screen's right edge.
				const wide = Array.from(document.querySelectorAll("body *"))
					.filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1 && !el.closest(".table-wrap, .chart"))
					.slice(-5)
					.map((el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + "." + el.className);
				return {
					wide,
					scrollWidth: document.documentElement.scrollWidth,
					innerWidth: window.innerWidth,
					signOut: { left: out.left, right: out.right, bottom: out.bottom },
					barBottom: box(".topbar").bottom,
				};
			})()`);
		const pages: [string, string][] = [
			["/", `#fleet-table tr[data-agent="${agent}"]`],
			[`/jobs?agent=${agent}`, `#jobs-table tr[data-job="${job.id}"]`],
			[`/jobs/${job.id}`, "#job-log li.t-assistant"],
			[`/agents/${scheduled}/runs`, "#runs-chart svg"],
			["/usage", "#usage-chart svg"],
			["/incidents", "#incidents-meta:not(:empty)"],
		];
		for (const width of [375, 768]) {
			await page.setViewportSize({ width, height: 800 });
			for (const [p, loaded] of pages) {
				await page.goto(`${url}${p}`);
				await page.locator(loaded).first().waitFor(LIVE);
				const f = await frame();
				expect(f.scrollWidth, `${p} at ${width}px: ${f.wide.join(", ")}`).toBeLessThanOrEqual(f.innerWidth);
				// Sign out is on the screen and on the (dark) bar, not below it on the page's light background.
				expect(f.signOut.left, p).toBeGreaterThanOrEqual(0);
				expect(f.signOut.right, p).toBeLessThanOrEqual(f.innerWidth);
				expect(f.signOut.bottom, p).toBeLessThanOrEqual(f.barBottom);
			}
		}
		await page.setViewportSize({ width: 375, height: 800 });
		// The log's text has the screen's width, not what four fixed columns leave of it.
		await page.goto(`${url}/jobs/${job.id}`);
		const body = page.locator("#job-log li.t-assistant .body").first();
		await body.waitFor(LIVE);
		expect((await body.boundingBox())!.width).toBeGreaterThan(250);
		// A run's note is read a line of words at a time, not a word a line.
		await page.goto(`${url}/agents/${scheduled}/runs`);
		const note = page.locator("#runs-table td.error-text:not(:empty)").first();
		await note.waitFor(LIVE);
		expect((await note.boundingBox())!.width).toBeGreaterThan(150);
		// A time in a table is two lines, the time and how long ago: its narrow column broke them into
		// five a row. The table scrolls sideways instead.
		const lines = (cell: string) =>
			page.evaluate<number>(`(() => {
				// A text node's rects: one a line it takes.
				const walk = document.createTreeWalker(document.querySelector(${JSON.stringify(cell)}), NodeFilter.SHOW_TEXT);
				let n = 0;
				for (let t = walk.nextNode(); t; t = walk.nextNode()) {
					const range = document.createRange();
					range.selectNodeContents(t);
					n += range.getClientRects().length;
				}
				return n;
			})()`);
		expect(await lines("#runs-table tbody tr td")).toBe(2);
		await page.goto(`${url}/jobs?agent=${agent}`);
		const started = `#jobs-table tr[data-job="${job.id}"] td:nth-child(5)`;
		await page.locator(`${started} time`).waitFor(LIVE);
		// The time, then how long ago: "just now" for a job started within the minute.
		expect(await page.locator(started).textContent()).toMatch(/ UTC(just now|.+ ago)$/);
		expect(await lines(started)).toBe(2);
		// A schedule's cron and zone, a model's name in a job's usage, and a day in the usage table, on one line too.
		await page.goto(`${url}/?prefix=daily-digest`);
		const cron = '#fleet-table tr[data-agent="daily-digest"] code';
		await page.locator(cron).first().waitFor(LIVE);
		expect(await page.locator(cron).first().textContent()).toBe("0 9 * * 1-5 Europe/Berlin");
		expect(await lines(cron)).toBe(1);
		await page.goto(`${url}/jobs/${job.id}`);
		await page.locator("#job-usage tbody td.mono").first().waitFor(LIVE);
		expect(await lines("#job-usage tbody td.mono")).toBe(1);
		await page.goto(`${url}/usage?agent=${agent}`);
		await page.locator("#usage-table tbody td a").first().waitFor(LIVE);
		expect(await page.locator("#usage-table tbody td").first().textContent()).toMatch(/^\d{4}-\d{2}-\d{2}$/);
		expect(await lines("#usage-table tbody td")).toBe(1);
		// The charts' text keeps a legible size: the chart scrolls in its box instead of shrinking.
		for (const [p, chart] of [[`/agents/${scheduled}/runs`, "#runs-chart"], ["/usage", "#usage-chart"]]) {
			await page.goto(`${url}${p}`);
			await page.locator(`${chart} svg text`).first().waitFor(LIVE);
			const px = await page.evaluate<number>(`(() => {
				const svg = document.querySelector(${JSON.stringify(chart + " svg")});
				const text = svg.querySelector("text");
				return parseFloat(getComputedStyle(text).fontSize) * svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
			})()`);
			expect(px, p).toBeGreaterThanOrEqual(9);
		}
		await shot(page, "phone-runs");
		await page.close();
	});


	it("keeps the scheduler pill current with the page's polls: red, with the scheduler's error, while it is stalled; amber while a shard is behind or an agent is not reached", async () => {
		const BEHIND = "1 scheduler shard is behind: due agents still wait to be called for 2026-01-01T09:03:00.000Z, 4 minutes before the last tick";
		for (const p of ["/usage", "/"]) {
			const page = await open(p, { fakeClock: true });
			await page.locator("#signin").waitFor({ state: "visible" });
			// The status as the scheduler's heartbeat would make it: fresh, then stalled, then fresh again.
			let stalled = false;
			let behind = false;
			let partial = false;
			let shardDown = false;
			// The page's clock, which the steps move on: the route's times are read on it.
			let elapsed = 0;
			const step = async () => {
				elapsed += 10_000;
				await stepClock(page, 10_000);
			};
			await page.route(
				(u) => u.pathname === "/v1/status",
				async (route) => {
					const body = (await (await fetchWhole(route)).json()) as { scheduler: Record<string, unknown> };
					// Stalled: ticks still come (20 s ago), every one failed since the last good one.
					const lastOk = new Date(Date.now() + elapsed - (stalled ? 900_000 : 20_000)).toISOString();
					const tick = new Date(Date.now() + elapsed - 20_000).toISOString();
					const error = stalled ? "shard 3 did not answer" : shardDown ? "shard 3 did not answer the tick" : partial ? "agent broken: unreachable" : null;
					const outcome = stalled ? "failed" : partial || shardDown ? "partial" : "ok";
					const scheduler = { ...body.scheduler, last_tick_at: tick, last_ok_at: lastOk, outcome, stalled, error, shards_behind: behind ? 1 : 0, shards_ok: shardDown ? 15 : 16, shards_failed: shardDown ? 1 : 0 };
					return route.fulfill({ json: { ...body, scheduler, warnings: behind ? [BEHIND] : [], warning_kinds: behind ? ["scheduler_behind"] : [] } });
				},
			);
			await page.locator("#token").fill(tokens.read);
			await page.locator("#signin-form button[type=submit]").click();
			const pill = page.locator("#scheduler-pill");
			await pill.filter({ hasText: /^last tick / }).waitFor(LIVE);
			expect(await pill.getAttribute("class")).toBe("pill");
			await viewReady(page);
			stalled = true;
			await step();
			await page.locator("#scheduler-pill.bad", { hasText: "scheduler stalled · last good tick 15 minutes ago · shard 3 did not answer" }).waitFor(LIVE);
			stalled = false;
			await step();
			await pill.filter({ hasText: /^last tick \d+ seconds ago$/ }).waitFor(LIVE);
			expect(await pill.getAttribute("class")).toBe("pill");
			// A partial tick: the scheduler works, an agent it could not reach is named in the title.
			partial = true;
			await step();
			await page.locator("#scheduler-pill.warn", { hasText: /^last tick \d+ seconds ago · some agents not reached$/ }).waitFor(LIVE);
			expect(await pill.getAttribute("title")).toBe("Scheduler: agent broken: unreachable");
			partial = false;
			// A shard that did not answer: counted, its agents all uncalled that minute.
			shardDown = true;
			await step();
			await page.locator("#scheduler-pill.warn", { hasText: /^last tick \d+ seconds ago · 1 shard of 16 not reached$/ }).waitFor(LIVE);
			expect(await pill.getAttribute("title")).toBe("Scheduler: shard 3 did not answer the tick");
			shardDown = false;
			await step();
			await pill.filter({ hasText: /^last tick \d+ seconds ago$/ }).waitFor(LIVE);
			expect(await pill.getAttribute("class")).toBe("pill");
			// A shard behind its ticks: amber, and the warning in full in the title.
			behind = true;
			await step();
			await page.locator("#scheduler-pill.warn", { hasText: /^last tick \d+ seconds ago · 1 shard behind$/ }).waitFor(LIVE);
			expect(await pill.getAttribute("title")).toBe(BEHIND);
			behind = false;
			await step();
			await pill.filter({ hasText: /^last tick \d+ seconds ago$/ }).waitFor(LIVE);
			expect(await pill.getAttribute("class")).toBe("pill");
			await page.close();
		}
	});


	it("says on the scheduler pill that D1 lacks migrations, amber when they only add indexes, red when the code needs one or D1's record cannot be read, naming them and the command in its title", async () => {
		const FIX = "npx wrangler d1 migrations apply DB --remote";
		const page = await open("/", { fakeClock: true });
		await page.locator("#signin").waitFor({ state: "visible" });
		let d1: unknown = { ok: true, missing: ["0012_incidents_by_agent_time.sql"], fix: FIX };
		await page.route(
			(u) => u.pathname === "/v1/status",
			async (route) => {
				const body = (await (await fetchWhole(route)).json()) as { scheduler: Record<string, unknown> };
				const scheduler = { ...body.scheduler, last_tick_at: new Date(Date.now() - 20_000).toISOString(), stalled: false, error: null, shards_behind: 0 };
				return route.fulfill({ json: { ...body, scheduler, warnings: [], d1 } });
			},
		);
		await page.locator("#token").fill(tokens.read);
		await page.locator("#signin-form button[type=submit]").click();
		const pill = page.locator("#scheduler-pill");
		await page.locator("#scheduler-pill.warn", { hasText: /^last tick \d+ seconds ago · D1 migrations missing$/ }).waitFor(LIVE);
		expect(await pill.getAttribute("title")).toBe(`D1 migrations missing: 0012_incidents_by_agent_time.sql; run ${FIX}`);
		await viewReady(page);
		// One the code needs: its routes fail until it is applied.
		d1 = { ok: false, missing: ["0010_heartbeat_backlog.sql"], fix: FIX };
		await stepClock(page, 10_000);
		await page.locator("#scheduler-pill.bad", { hasText: /^last tick \d+ seconds ago · D1 migrations missing$/ }).waitFor(LIVE);
		expect(await pill.getAttribute("title")).toBe(`D1 migrations missing: 0010_heartbeat_backlog.sql; run ${FIX}`);
		d1 = { ok: false };
		await stepClock(page, 10_000);
		await page.locator("#scheduler-pill.bad", { hasText: /^last tick \d+ seconds ago · D1 unreadable$/ }).waitFor(LIVE);
		expect(await pill.getAttribute("title")).toBe("D1's record of its migrations could not be read (the Worker's logs say why)");
		d1 = { ok: true };
		await stepClock(page, 10_000);
		await pill.filter({ hasText: /^last tick \d+ seconds ago$/ }).waitFor(LIVE);
		expect(await pill.getAttribute("class")).toBe("pill");
		expect(await pill.getAttribute("title")).toBe("");
		await page.close();
	});

	it("polls the jobs and incidents lists every 10 s: the first page, with the filters chosen, and never over pages added with Older", async () => {
		// A real job's list record, which the made-up ones copy.
		const { agent: model } = await completedJob(`dash-polled-${run}`);
		const { jobs: [real] } = await call<{ jobs: Record<string, unknown>[] }>("GET", `/v1/jobs?agent=${model}&limit=1`, tokens.read);
		const page = await signedIn("/incidents", tokens.read, { fakeClock: true });
		// A list of made-up completed jobs, newest first, that grows by `added` (a cursor is an offset).
		let added = 0;
		const asked: URLSearchParams[] = [];
		const fake = (n: number) => ({ ...real!, status: "completed", id: `job-2026-01-01-${String(n).padStart(6, "0")}` });
		await page.route(
			(u) => u.pathname === "/v1/jobs",
			(route) => {
				const q = new URL(route.request().url()).searchParams;
				asked.push(q);
				const all = Array.from({ length: 60 + added }, (_, i) => fake(60 + added - i));
				const from = Number(q.get("cursor") ?? 0);
				return route.fulfill({ json: { jobs: all.slice(from, from + 25), next_cursor: from + 25 < all.length ? String(from + 25) : null } });
			},
		);
		await page.goto(`${url}/jobs?status=completed`);
		const rows = page.locator("#jobs-table tbody tr");
		await page.locator(`#jobs-table tr[data-job="${fake(60).id}"]`).waitFor(LIVE);
		const polls = await watchTimers(page, 10_000);
		added = 1;
		await page.clock.runFor(10_000);
		await expect.poll(() => rows.first().getAttribute("data-job"), LIVE).toBe(fake(61).id);
		await expect.poll(polls, LIVE).toBe(1);
		expect(await rows.count()).toBe(25);
		expect(asked.at(-1)!.toString()).toBe("status=completed&limit=25");
		// A page added with Older stays, and the poll leaves the list as the reader has it.
		await page.locator("#jobs-older").click();
		await expect.poll(() => rows.count(), LIVE).toBe(50);
		const reads = asked.length;
		added = 2;
		await page.clock.runFor(10_000);
		await expect.poll(polls, LIVE).toBe(2);
		expect(asked).toHaveLength(reads);
		expect(await rows.count()).toBe(50);
		expect(await rows.first().getAttribute("data-job")).toBe(fake(61).id);

		// Incidents: a new one shows at the next poll, under the state chosen.
		const now = Date.now();
		const incident = (n: number) => ({
			id: `poll_${String(n).padStart(12, "0")}`,
			agent: "triage",
			signature: `sig-${n}`,
			class: "agent",
			state: "detected",
			error: `polled error ${n}`,
			count: 1,
			first_seen_at: new Date(now - n * 60_000).toISOString(),
			last_seen_at: new Date(now - n * 60_000).toISOString(),
			last_job_id: null,
			alerted_at: null,
			resolved_at: null,
			closed_at: null,
			closed_by: null,
		});
		const incidents = [incident(1)];
		const incidentQueries: string[] = [];
		await page.route(
			(u) => u.pathname === "/v1/incidents",
			(route) => {
				incidentQueries.push(new URL(route.request().url()).searchParams.toString());
				return route.fulfill({ json: { incidents, next_cursor: null } });
			},
		);
		await page.goto(`${url}/incidents?state=detected`);
		await page.locator("#incidents-table tbody tr", { hasText: "polled error 1" }).waitFor(LIVE);
		incidents.unshift(incident(0));
		await page.clock.runFor(10_000);
		await page.locator("#incidents-table tbody tr", { hasText: "polled error 0" }).waitFor(LIVE);
		expect(await page.locator("#incidents-meta").textContent()).toBe("2 incidents");
		expect(incidentQueries.at(-1)).toBe("limit=200&state=detected");
		await page.close();
	});


	it("approves under a changed definition only when asked: a 409 is put as a question in a dialog, and yes retries with allow_definition_change", async () => {
		const { agent, job } = await awaitingApproval(`dash-approve-def-${run}`, { text: "Filed under the new definition." }, {}, null);
		// The agent changes while the call waits.
		await call("PUT", `/v1/agents/${agent}`, tokens.admin, { name: agent, prompt: "Do the other thing.", timeout: "5m", tools: [TICKET_TOOL] });
		const page = await signedIn(`/jobs/${job.id}`);
		await page.locator("#job-approval").waitFor({ state: "visible", ...LIVE });
		const bodies: unknown[] = [];
		page.on("request", (r) => {
			if (r.method() === "POST" && r.url().endsWith(`/v1/jobs/${job.id}/approval`)) bodies.push(r.postDataJSON());
		});
		const ask = page.getByRole("dialog", { name: "Approve under the new definition" });
		const anyway = ask.getByRole("button", { name: "Approve under the new definition" });
		// No: nothing is approved, nothing is said to have been, and the job still waits.
		await page.locator("#approval-approve").click();
		await ask.waitFor(LIVE);
		expect(await ask.textContent()).toContain("The agent's definition changed since this job started: the tool may no longer be what it was. Approve the call to create_ticket under the new definition?");
		expect(await ask.getByRole("textbox").count()).toBe(0);
		await shot(page, "approve-definition-changed");
		await ask.getByRole("button", { name: "Cancel" }).click();
		await ask.waitFor({ state: "hidden" });
		await expect.poll(() => page.locator("#approval-approve").isEnabled(), LIVE).toBe(true);
		expect(bodies).toEqual([{ decision: "approve", tool_use_id: expect.stringMatching(/^toolu_/) }]);
		expect(await page.locator("#notice").isVisible()).toBe(false);
		expect((await getJob(job.id)).status).toBe("approval_pending");
		// Yes: approved under the new definition, and the job goes on to complete.
		await page.locator("#approval-approve").click();
		await anyway.click();
		await page.locator("#job-status .badge", { hasText: "completed" }).waitFor(LIVE);
		await ask.waitFor({ state: "hidden" });
		await page.locator("#notice", { hasText: "Approved" }).waitFor(LIVE);
		const named = { tool_use_id: expect.stringMatching(/^toolu_/) };
		expect(bodies).toEqual([{ decision: "approve", ...named }, { decision: "approve", ...named }, { decision: "approve", allow_definition_change: true, ...named }]);
		await page.close();
		expect(pageErrors).toEqual([]);
	});

	it("says the server is unreachable while a poll gets no answer, and that it is reachable again once a later poll succeeds", async () => {
		const agent = await createAgent(`dash-back-${run}`, {});
		await script({ text: "Done." });
		expect(await settled((await trigger(agent, "Go.")).id)).toBe("completed");
		const page = await signedIn("/jobs", tokens.read, { fakeClock: true });
		await page.locator("#jobs-table tbody tr").first().waitFor(LIVE);
		// The server goes away: the connection fails, with no answer at all.
		let down = true;
		await page.route(
			(u) => u.pathname === "/v1/jobs",
			(route) => (down ? route.abort("connectionrefused") : route.continue()),
		);
		await page.clock.runFor(10_000);
		const notice = page.locator("#notice");
		await notice.filter({ hasText: "The drover server is unreachable" }).waitFor(LIVE);
		expect(await notice.textContent()).not.toContain("Something went wrong");
		expect(await notice.getAttribute("role")).toBe("alert");
		// It is back: the next poll lists the jobs, and the lost notice gives way to a polite one saying so.
		down = false;
		await page.clock.runFor(10_000);
		await notice.filter({ hasText: "Reconnected — data is current again" }).waitFor(LIVE);
		expect(await notice.getAttribute("role")).toBe("status");
		expect(await notice.textContent()).not.toContain("unreachable");
		expect(await page.locator("#jobs-table tbody tr").count()).toBeGreaterThan(0);
		// Said once: the polls after it leave it as it is, until dismissed.
		await page.clock.runFor(10_000);
		expect(await notice.textContent()).toContain("Reconnected");
		await notice.getByRole("button", { name: "Dismiss" }).click();
		await page.clock.runFor(10_000);
		expect(await notice.isVisible()).toBe(false);
		await page.close();
	});


	it("clears the list when a filter cannot be loaded, rather than leave the last one's rows and count under the error", async () => {
		// A job for the list to show before the filter.
		await completedJob(`dash-cleared-${run}`);
		const page = await signedIn("/jobs", tokens.read);
		const rows = page.locator("#jobs-table tbody tr");
		await rows.first().waitFor(LIVE);
		const agent = page.locator("#jobs-filter input[name=agent]");
		await agent.fill("Not An Agent!");
		await agent.press("Enter");
		// Said at the filter (its field's error), not in the page's notice.
		await page.locator("#jobs-filter-error").waitFor({ state: "visible", ...LIVE });
		await expect.poll(() => rows.count(), LIVE).toBe(0);
		expect(await page.locator("#jobs-meta").textContent()).toBe("");
		expect(await page.locator("#jobs-older").isHidden()).toBe(true);
		// Nor does it claim that no jobs match: none were read.
		expect(await page.locator("#jobs-empty").isHidden()).toBe(true);
		await page.close();
	});


	it("follows an agent on its logs page: its recent jobs' last lines, oldest first, then a job started while it is open, live, without a reload", async () => {
		const agent = await createAgent(`dash-logs-${run}`, {});
		await script({ text: "First answer." });
		const first = await trigger(agent, "One.");
		expect(await settled(first.id)).toBe("completed");
		await script({ text: "Second answer." });
		const second = await trigger(agent, "Two.");
		expect(await settled(second.id)).toBe("completed");

		// From the fleet's row of the agent.
		const fleet = await signedIn("/", tokens.read);
		await fleet.locator(`#fleet-table tr[data-agent="${agent}"] a[aria-label="Logs of ${agent}"]`).click();
		await fleet.waitForURL(`${url}/agents/${agent}/logs`);
		await fleet.close();

		const page = await signedIn(`/agents/${agent}/logs`, tokens.read, { fakeClock: true });
		const sections = page.locator("#agent-logs section.agent-log-job");
		await page.locator("#agent-logs-meta", { hasText: "no job running" }).waitFor(LIVE);
		expect(await sections.evaluateAll((els) => els.map((e) => (e as unknown as { dataset: { job: string } }).dataset.job))).toEqual([first.id, second.id]);
		const of = (id: string) => page.locator(`#agent-logs section[data-job="${id}"]`);
		await of(first.id).locator("li.t-assistant", { hasText: "First answer." }).waitFor(LIVE);
		await of(second.id).locator("li.t-assistant", { hasText: "Second answer." }).waitFor(LIVE);
		expect(await of(second.id).locator(".job-state .badge").textContent()).toBe("completed");
		// Every stored line of the newest job, once, in order.
		const stored = (await (await fetch(`${url}/v1/jobs/${second.id}/output`, { headers: { authorization: `Bearer ${tokens.read}` } })).text()).trim().split("\n");
		expect(await of(second.id).locator("ol.log li").count()).toBe(stored.length);

		// A job started while the page is open: found at the next poll (10 s), then followed live to its end.
		const polls = await watchTimers(page, 10_000);
		await script({ delay_ms: 1500, then: { text: "Third answer, slowly." } });
		const third = await trigger(agent, "Three.");
		await page.clock.runFor(10_000);
		await of(third.id).waitFor(LIVE);
		await of(third.id).locator("li.t-assistant", { hasText: "Third answer, slowly." }).waitFor(LIVE);
		await of(third.id).locator(".job-state .badge", { hasText: "completed" }).waitFor(LIVE);
		expect(await sections.count()).toBe(3);
		expect(await sections.last().getAttribute("data-job")).toBe(third.id);
		const thirdStored = (await (await fetch(`${url}/v1/jobs/${third.id}/output`, { headers: { authorization: `Bearer ${tokens.read}` } })).text()).trim().split("\n");
		expect(await of(third.id).locator("ol.log li").allTextContents()).toHaveLength(thirdStored.length);
		expect(await polls()).toBeGreaterThan(0);
		await shot(page, "agent-logs");

		// More jobs between two polls than a page of the list holds: every one gets its section.
		const burst: string[] = [];
		for (let i = 0; i < 22; i++) burst.push((await trigger(agent, `Burst ${i}.`)).id);
		for (const id of burst) await settled(id);
		await page.clock.runFor(10_000);
		await of(burst.at(-1)!).locator(".job-state .badge", { hasText: "completed" }).waitFor(LIVE);
		expect(await sections.evaluateAll((els) => els.map((e) => (e as unknown as { dataset: { job: string } }).dataset.job))).toEqual([first.id, second.id, third.id, ...burst]);
		await page.close();
	});

	it("adds no section at a poll for an agent's older jobs, beyond the newest 20 it opened with, that were there all along", async () => {
		const now = Date.now();
		// An agent with 100 ended jobs, newest first, as the API pages them (a cursor is an offset).
		const jobs = Array.from({ length: 100 }, (_, i) => ({
			id: `job-2026-01-01-${String(100 - i).padStart(6, "0")}`,
			agent: "many-jobs",
			schedule: "hourly",
			trigger_type: "cron",
			status: "completed",
			exit_reason: "success",
			dispatch: "on_time",
			scheduled_instant: new Date(now - (i + 1) * 3_600_000).toISOString(),
			created_at: new Date(now - (i + 1) * 3_600_000).toISOString(),
			started_at: new Date(now - (i + 1) * 3_600_000 + 1_000).toISOString(),
			finished_at: new Date(now - (i + 1) * 3_600_000 + 31_000).toISOString(),
			duration_seconds: 30,
			summary: `Job ${i}.`,
			revision: 1,
			tool_calls: { made: 0, failed: 0 },
		}));
		const page = await signedIn("/incidents", tokens.read, { fakeClock: true });
		await page.route(
			(u) => u.pathname === "/v1/agents/many-jobs/jobs",
			(route) => {
				const q = new URL(route.request().url()).searchParams;
				const list = q.get("status") ? jobs.filter((j) => j.status === q.get("status")) : jobs;
				const from = Number(q.get("cursor") ?? 0);
				const limit = Number(q.get("limit") ?? 50);
				return route.fulfill({ json: { jobs: list.slice(from, from + limit), next_cursor: from + limit < list.length ? String(from + limit) : null } });
			},
		);
		// Each job's output is 50 lines: the page opens with the last lines of the newest four.
		await page.route(
			(u) => /^\/v1\/jobs\/job-2026-01-01-\d+\/(output|stream)$/.test(u.pathname),
			(route) => {
				if (route.request().url().includes("/stream")) return route.fulfill({ status: 200, headers: { "content-type": "text/event-stream" }, body: "event: end\ndata: {}\n\n" });
				const lines = Array.from({ length: 50 }, (_, i) => JSON.stringify({ type: "system", subtype: "note", content: `line ${i + 1}` }));
				return route.fulfill({ status: 200, headers: { "content-type": "application/x-ndjson", "x-drover-first-line": "1" }, body: `${lines.join("\n")}\n` });
			},
		);
		await page.goto(`${url}/agents/many-jobs/logs`);
		await page.locator("#agent-logs-meta", { hasText: "no job running" }).waitFor(LIVE);
		const sections = page.locator("#agent-logs section.agent-log-job");
		const opened = await sections.evaluateAll((els) => els.map((e) => (e as unknown as { dataset: { job: string } }).dataset.job));
		expect(opened).toEqual(jobs.slice(0, 4).map((j) => j.id).reverse());
		const polls = await watchTimers(page, 10_000);
		await page.clock.runFor(10_000);
		await expect.poll(polls, LIVE).toBe(1);
		expect(await sections.evaluateAll((els) => els.map((e) => (e as unknown as { dataset: { job: string } }).dataset.job))).toEqual(opened);
		expect(await page.locator("#agent-logs-announce").textContent()).not.toContain("started");
		await page.close();
	});

	it("numbers the lines of a job whose output is longer than its logs page shows, from the tail's first line", async () => {
		const agent = await createAgent(`dash-logs-long-${run}`, { tools: [{ ...TICKET_TOOL, requires_approval: false }], max_turns: 200 });
		await script(...Array.from({ length: 110 }, (_, i) => ({ tool_use: { name: "create_ticket", input: { title: `Ticket ${i}` } } })), { text: "Filed them all." });
		const job = await trigger(agent, "File them.");
		expect(await settled(job.id)).toBe("completed");
		const total = (await (await fetch(`${url}/v1/jobs/${job.id}/output`, { headers: { authorization: `Bearer ${tokens.read}` } })).text()).trim().split("\n").length;
		expect(total).toBeGreaterThan(200);

		const page = await signedIn(`/agents/${agent}/logs`, tokens.read);
		const lines = page.locator(`#agent-logs section[data-job="${job.id}"] ol.log li`);
		await lines.locator("text=Filed them all.").waitFor(LIVE);
		// The page's 200 lines: the output's last 200, numbered as the job's page numbers them.
		expect(await lines.evaluateAll((els) => els.map((e) => e.getAttribute("data-line")))).toEqual(Array.from({ length: 200 }, (_, i) => String(total - 199 + i)));
		expect(await lines.first().locator(".n").textContent()).toBe(String(total - 199));
		await page.close();
	});

	it("follows a live job with a long output from the first of the 2,000 lines its section keeps, saying how many came before", async () => {
		const agent = await createAgent(`dash-logs-tail-${run}`, {});
		await script({ hang: true });
		const job = await trigger(agent, "Hold the slot.");
		await expect.poll(async () => (await getJob(job.id)).status, LIVE).toBe("running");
		const page = await signedIn("/incidents", tokens.read);
		const LINES = 5_000;
		// The live job's output as one of 5,000 lines answers.
		await page.route((u) => u.pathname === `/v1/jobs/${job.id}/output` && u.searchParams.get("lines") === "1", (route) =>
			route.fulfill({ status: 200, headers: { "content-type": "application/x-ndjson", "x-drover-first-line": String(LINES) }, body: `${JSON.stringify({ type: "system", subtype: "note", content: `line ${LINES}` })}\n` }));
		const asked: (string | null)[] = [];
		await page.route(`**/v1/jobs/${job.id}/stream`, (route) => {
			const after = Number(route.request().headers()["last-event-id"] ?? 0);
			asked.push(String(after));
			const frames = Array.from({ length: LINES - after }, (_, i) => `id: ${after + 1 + i}\nevent: line\ndata: ${JSON.stringify({ type: "system", subtype: "note", content: `line ${after + 1 + i}` })}`);
			return route.fulfill({ status: 200, headers: { "content-type": "text/event-stream" }, body: `${frames.join("\n\n")}\n\nevent: end\ndata: {"status":"running"}\n\n` });
		});
		await page.goto(`${url}/agents/${agent}/logs`);
		const section = page.locator(`#agent-logs section[data-job="${job.id}"]`);
		await section.locator("li[data-line='5000']").waitFor(LIVE);
		expect(asked[0]).toBe("3000");
		const numbers = await section.locator("li[data-line]").evaluateAll((lis) => lis.map((li) => Number(li.getAttribute("data-line"))));
		expect(numbers).toEqual(Array.from({ length: 2_000 }, (_, i) => 3_001 + i));
		expect(await section.locator(".cut-note").textContent()).toBe("3,000 earlier lines: the job's page shows more, and downloads them all");
		await page.close();
		await call("POST", `/v1/jobs/${job.id}/cancel`, tokens.operate, {});
	});

	it("opens an agent's logs page with every live job, a queue's oldest beyond the newest 20 too, and follows each as the queue runs", async () => {
		// One job holds the only slot (its model never answers); 24 queue behind it.
		const agent = await createAgent(`dash-logs-queue-${run}`, { max_concurrent: 1 });
		await script({ hang: true });
		const holder = await trigger(agent, "Hold the slot.");
		await expect.poll(async () => (await getJob(holder.id)).status, LIVE).toBe("running");
		const queued: JobRecord[] = [];
		for (let i = 0; i < 24; i++) queued.push(await trigger(agent, `Queued ${i}.`));

		const page = await signedIn(`/agents/${agent}/logs`, tokens.read);
		const sections = page.locator("#agent-logs section.agent-log-job");
		await page.locator("#agent-logs-meta", { hasText: "following 25 live jobs" }).waitFor(LIVE);
		// Every live job has its section at once, oldest first, the holder on top.
		expect(await sections.evaluateAll((els) => els.map((e) => (e as unknown as { dataset: { job: string } }).dataset.job))).toEqual([holder.id, ...queued.map((j) => j.id)]);

		await call("POST", `/v1/jobs/${holder.id}/cancel`, tokens.operate, {});
		const of = (id: string) => page.locator(`#agent-logs section[data-job="${id}"]`);
		await of(holder.id).locator(".job-state .badge", { hasText: "cancelled" }).waitFor(LIVE);
		for (const job of queued) await of(job.id).locator(".job-state .badge", { hasText: "completed" }).waitFor(LIVE);
		// Each followed to its end: its last line, the result, is there once.
		for (const job of [queued[0]!, queued.at(-1)!]) expect(await of(job.id).locator("li.t-system", { hasText: "final answer" }).count()).toBe(1);
		await page.locator("#agent-logs-meta", { hasText: "no job running" }).waitFor(LIVE);
		await page.close();
	});

	it("says an agent does not exist on its logs page, with no empty log left", async () => {
		const page = await signedIn("/agents/no-such-agent/logs");
		await page.locator("#notice", { hasText: "no-such-agent" }).waitFor(LIVE);
		expect(await page.locator("#agent-logs").isVisible()).toBe(false);
		expect(await page.locator("#agent-logs-empty").isVisible()).toBe(false);
		await page.close();
	});

	it("shows an agent's definition and notepad on its runs page, read afresh each time they are opened", async () => {
		const agent = await createAgent(`dash-about-${run}`, { prompt: "Watch the disk on db-1.", max_turns: 7 });
		const page = await signedIn(`/agents/${agent}/runs`, tokens.read);
		await page.locator("#runs-meta").waitFor(LIVE);
		const definition = page.locator("#agent-definition-body");
		await page.locator("#agent-definition summary").click();
		await definition.locator("pre").waitFor(LIVE);
		// The stored definition, and where it comes from.
		// As YAML, as `drover definition` prints it and the API takes it back.
		expect(await definition.locator("pre").textContent()).toContain("prompt: Watch the disk on db-1.\n");
		expect(await definition.locator("pre").textContent()).toContain("max_turns: 7\n");
		expect(await definition.textContent()).toContain("Defined through the API, revision ");
		const notepad = page.locator("#agent-notepad-body");
		await page.locator("#agent-notepad summary").click();
		await notepad.locator("p", { hasText: "Empty: nothing is carried into its prompts." }).waitFor(LIVE);
		// Written while the page is open: the next opening reads it.
		await call("PUT", `/v1/agents/${agent}/notepad/watermark`, tokens.operate, { value: "2026-11-30\nlast disk: 91%" });
		await page.locator("#agent-notepad summary").click();
		await page.locator("#agent-notepad summary").click();
		await notepad.locator("dt", { hasText: "watermark" }).waitFor(LIVE);
		expect(await notepad.locator("dd pre").textContent()).toBe("2026-11-30\nlast disk: 91%");
		// fleet.yaml's agents say where to change them.
		await page.goto(`${url}/agents/triage/runs`);
		await page.locator("#runs-meta").waitFor(LIVE);
		await page.locator("#agent-definition summary").click();
		await definition.locator("p", { hasText: "From fleet.yaml (change it there and deploy)" }).waitFor(LIVE);
		await page.close();
	});

	it("writes, edits and deletes an agent's notepad keys from its runs page, saying a refused write in the form and a redacted one in the notice", async () => {
		const agent = await createAgent(`dash-notepad-${run}`, {});
		const stored = () => call<Record<string, string>>("GET", `/v1/agents/${agent}/notepad`, tokens.read);
		const page = await signedIn(`/agents/${agent}/runs`, tokens.operate);
		await page.locator("#runs-meta").waitFor(LIVE);
		const body = page.locator("#agent-notepad-body");
		await page.locator("#agent-notepad summary").click();
		await body.locator("p", { hasText: "Empty: nothing is carried into its prompts." }).waitFor(LIVE);
		// A key set from the form: drawn from the write's answer, and stored.
		await page.getByLabel("Key", { exact: true }).fill("watermark");
		await page.getByLabel("Value", { exact: true }).fill("2026-11-30\nlast disk: 91%");
		await page.getByRole("button", { name: "Save", exact: true }).click();
		await page.locator("#notice", { hasText: `Saved watermark on ${agent}'s notepad` }).waitFor(LIVE);
		expect(await body.locator("dt").allTextContents()).toEqual(["watermark"]);
		expect(await body.locator("dd pre").textContent()).toBe("2026-11-30\nlast disk: 91%");
		expect(await stored()).toEqual({ watermark: "2026-11-30\nlast disk: 91%" });
		// Edit fills the form with the key and its value; Ctrl+Enter in the value saves.
		await page.getByRole("button", { name: "Edit watermark" }).click();
		expect(await page.getByLabel("Key", { exact: true }).inputValue()).toBe("watermark");
		expect(await page.getByLabel("Value", { exact: true }).inputValue()).toBe("2026-11-30\nlast disk: 91%");
		await page.getByLabel("Value", { exact: true }).fill("2026-12-01");
		await page.getByLabel("Value", { exact: true }).press("Control+Enter");
		await body.locator("dd pre", { hasText: "2026-12-01" }).waitFor(LIVE);
		expect(await stored()).toEqual({ watermark: "2026-12-01" });
		// The form was drawn afresh under the keyboard: the focus is on its key, not lost to the page.
		expect(await page.evaluate<string | undefined>("document.activeElement?.id")).toBe("notepad-key");
		// A value over 16 KiB is refused: said in the form, which keeps what was typed; nothing changed.
		await page.getByLabel("Key", { exact: true }).fill("big");
		await page.getByLabel("Value", { exact: true }).fill("x".repeat(17 * 1024));
		await page.getByRole("button", { name: "Save", exact: true }).click();
		await body.locator("form [role=alert]").waitFor(LIVE);
		expect(await body.locator("form [role=alert]").textContent()).toBe("a notepad value is at most 16 KiB; this one is 17408 bytes");
		// Tied to the value it is about, before the field's hint, and the value marked wrong; the key is not.
		expect(await accessibleDescription(page, "#notepad-value")).toMatch(/^a notepad value is at most 16 KiB; this one is 17408 bytes Carried into its next prompts/);
		expect(await page.getByLabel("Value", { exact: true }).getAttribute("aria-invalid")).toBe("true");
		expect(await accessibleDescription(page, "#notepad-key")).toBeFalsy();
		expect(await page.getByLabel("Key", { exact: true }).getAttribute("aria-invalid")).toBeNull();
		expect(await page.getByLabel("Key", { exact: true }).inputValue()).toBe("big");
		expect((await page.getByLabel("Value", { exact: true }).inputValue()).length).toBe(17 * 1024);
		expect(await stored()).toEqual({ watermark: "2026-12-01" });
		// A credential is stored redacted, and the notice says so.
		const secret = `sk-ant-api03-${"A".repeat(48)}`;
		await page.getByLabel("Value", { exact: true }).fill(`token ${secret} end`);
		// Edited, it is no longer marked wrong (the error is still said, and with the field, until the next save).
		expect(await page.getByLabel("Value", { exact: true }).getAttribute("aria-invalid")).toBeNull();
		await page.getByRole("button", { name: "Save", exact: true }).click();
		await page.locator("#notice", { hasText: "redacted (it looked like a secret)" }).waitFor(LIVE);
		expect(await accessibleDescription(page, "#notepad-value")).not.toContain("at most 16 KiB");
		// A key over 128 characters: tied to the key, the value not.
		await page.getByLabel("Key", { exact: true }).fill("k".repeat(129));
		await page.getByLabel("Value", { exact: true }).fill("v");
		await page.getByRole("button", { name: "Save", exact: true }).click();
		await body.locator("form [role=alert]").waitFor(LIVE);
		const keyError = (await body.locator("form [role=alert]").textContent())!;
		expect(keyError).toContain("key");
		expect(await accessibleDescription(page, "#notepad-key")).toBe(keyError);
		expect(await page.getByLabel("Key", { exact: true }).getAttribute("aria-invalid")).toBe("true");
		expect(await accessibleDescription(page, "#notepad-value")).not.toContain(keyError);
		expect(await page.getByLabel("Value", { exact: true }).getAttribute("aria-invalid")).toBeNull();
		expect(await body.locator("dt").allTextContents()).toEqual(["big", "watermark"]);
		expect((await stored()).big).toBe("token sk-ant-api03-[REDACTED] end");
		expect(await body.textContent()).not.toContain(secret);
		// Delete is asked first; Cancel changes nothing, Delete removes the key.
		await page.getByRole("button", { name: "Delete watermark" }).click();
		const ask = page.getByRole("dialog", { name: `Delete watermark from ${agent}'s notepad` });
		await ask.getByRole("button", { name: "Cancel" }).click();
		await ask.waitFor({ state: "detached", ...LIVE });
		expect(Object.keys(await stored())).toEqual(["big", "watermark"]);
		await page.getByRole("button", { name: "Delete watermark" }).click();
		await ask.getByRole("button", { name: "Delete", exact: true }).click();
		await page.locator("#notice", { hasText: `Deleted watermark from ${agent}'s notepad` }).waitFor(LIVE);
		expect(await body.locator("dt").allTextContents()).toEqual(["big"]);
		expect(Object.keys(await stored())).toEqual(["big"]);
		// A read-only token is shown the notepad and offered none of its writes.
		const reader = await signedIn(`/agents/${agent}/runs`, tokens.read);
		await reader.locator("#runs-meta").waitFor(LIVE);
		await reader.locator("#agent-notepad summary").click();
		await reader.locator("#agent-notepad-body dt", { hasText: "big" }).waitFor(LIVE);
		expect(await reader.locator("#agent-notepad-body form").isVisible()).toBe(false);
		expect(await reader.getByRole("button", { name: "Delete big" }).isVisible()).toBe(false);
		expect(await reader.getByRole("button", { name: "Edit big" }).isVisible()).toBe(false);
		await reader.close();
		await page.close();
	});

	it("refuses a notepad write or delete made on a value someone changed since it was shown, draws it as it is now, and writes over it when asked again", async () => {
		const agent = await createAgent(`dash-notepad-race-${run}`, {});
		const path = `/v1/agents/${agent}/notepad`;
		const stored = () => call<Record<string, string>>("GET", path, tokens.read);
		await call("PUT", `${path}/owner`, tokens.operate, { value: "alice" });
		const page = await signedIn(`/agents/${agent}/runs`, tokens.operate);
		await page.locator("#runs-meta").waitFor(LIVE);
		const body = page.locator("#agent-notepad-body");
		const alert = body.locator("form [role=alert]");
		const key = page.getByLabel("Key", { exact: true });
		const value = page.getByLabel("Value", { exact: true });
		const save = page.getByRole("button", { name: "Save", exact: true });
		await page.locator("#agent-notepad summary").click();
		await body.locator("dd pre", { hasText: "alice" }).waitFor(LIVE);

		// An edit of alice's value, saved after someone else set bob: refused, bob drawn, carol kept in the form.
		await page.getByRole("button", { name: "Edit owner" }).click();
		await value.fill("carol");
		await call("PUT", `${path}/owner`, tokens.operate, { value: "bob" });
		await save.click();
		await alert.waitFor(LIVE);
		expect(await alert.textContent()).toBe("Not saved: someone changed owner since the notepad was shown; it is shown above as it is now. Save again to replace it with yours, or Edit it to start from theirs.");
		// Said with the key it is about, which is not marked wrong: nothing typed is.
		expect(await accessibleDescription(page, "#notepad-key")).toBe(await alert.textContent());
		expect(await key.getAttribute("aria-invalid")).toBeNull();
		expect(await body.locator("dd pre").allTextContents()).toEqual(["bob"]);
		expect(await value.inputValue()).toBe("carol");
		expect(await stored()).toEqual({ owner: "bob" });
		// Saved again, it is made on bob's value, now seen, and replaces it.
		await save.click();
		await page.locator("#notice", { hasText: `Saved owner on ${agent}'s notepad` }).waitFor(LIVE);
		expect(await stored()).toEqual({ owner: "carol" });

		// A new key someone set meanwhile is not overwritten unseen either.
		await key.fill("fresh");
		await value.fill("mine");
		await call("PUT", `${path}/fresh`, tokens.operate, { value: "theirs" });
		await save.click();
		await alert.waitFor(LIVE);
		expect(await alert.textContent()).toBe("Not saved: someone set fresh since the notepad was shown; it is shown above as it is now. Save again to replace it with yours, or Edit it to start from theirs.");
		expect(await body.locator("dt").allTextContents()).toEqual(["fresh", "owner"]);
		expect(await stored()).toEqual({ fresh: "theirs", owner: "carol" });

		// A key deleted meanwhile: said, and saved again it is set.
		await call("DELETE", `${path}/fresh`, tokens.operate);
		await page.getByRole("button", { name: "Edit fresh" }).click();
		await value.fill("back");
		await save.click();
		await alert.waitFor(LIVE);
		expect(await alert.textContent()).toBe("Not saved: someone deleted fresh since the notepad was shown. Save again to set it.");
		expect(await body.locator("dt").allTextContents()).toEqual(["owner"]);
		expect(await stored()).toEqual({ owner: "carol" });
		await save.click();
		await page.locator("#notice", { hasText: `Saved fresh on ${agent}'s notepad` }).waitFor(LIVE);
		expect(await stored()).toEqual({ fresh: "back", owner: "carol" });

		// A delete of carol's value after someone set dave: asked again, naming dave, and only then deleted.
		await call("PUT", `${path}/owner`, tokens.operate, { value: "dave" });
		await page.getByRole("button", { name: "Delete owner" }).click();
		const ask = page.getByRole("dialog", { name: `Delete owner from ${agent}'s notepad` });
		await ask.getByRole("button", { name: "Delete", exact: true }).click();
		await ask.getByRole("button", { name: "Delete anyway" }).waitFor(LIVE);
		expect(await ask.locator("[role=alert]").textContent()).toBe("Someone changed owner since the notepad was shown; it now reads: dave — delete it anyway?");
		expect(await stored()).toEqual({ fresh: "back", owner: "dave" });
		await ask.getByRole("button", { name: "Delete anyway" }).click();
		await page.locator("#notice", { hasText: `Deleted owner from ${agent}'s notepad` }).waitFor(LIVE);
		expect(await stored()).toEqual({ fresh: "back" });
		expect(await body.locator("dt").allTextContents()).toEqual(["fresh"]);
		await page.close();
	});

	it("edits an API agent's definition as YAML for an admin: a refused save said at its line, a change made meanwhile not overwritten", async () => {
		const agent = await createAgent(`dash-define-${run}`, { prompt: "Watch the disk on db-1.", max_turns: 7 });
		const stored = async () => (await call<{ definition: { max_turns: number } }>("GET", `/v1/agents/${agent}`, tokens.read)).definition.max_turns;
		const page = await signedIn(`/agents/${agent}/runs`, tokens.admin);
		await page.locator("#runs-meta").waitFor(LIVE);
		const body = page.locator("#agent-definition-body");
		await page.locator("#agent-definition summary").click();
		await body.locator("pre").waitFor(LIVE);
		await body.getByRole("button", { name: "Edit" }).click();
		const field = page.getByLabel("Definition (YAML)");
		expect(await page.evaluate<string | undefined>("document.activeElement?.id")).toBe("definition-text");
		const text = await field.inputValue();
		expect(text).toBe(await (await fetch(`${url}/v1/agents/${agent}/definition`, { headers: { authorization: `Bearer ${tokens.read}` } })).text());
		// A value of the wrong type: refused, said with its line, the text kept; a click on the line puts the cursor there.
		await field.fill(text.replace("max_turns: 7", "max_turns: lots"));
		await page.getByRole("button", { name: "Save", exact: true }).click();
		const alert = body.locator("form [role=alert]");
		await alert.waitFor(LIVE);
		const line = text.split("\n").findIndex((l) => l === "max_turns: 7") + 1;
		expect(await alert.locator("p").textContent()).toBe("Not saved: one problem in it, at its place:");
		expect(await alert.locator("li").allTextContents()).toEqual([`Line ${line}, column 12: max_turns: Invalid input: expected number, received string`]);
		// Said with the text it is about too, before its hint, the text marked wrong until it is edited.
		expect(await accessibleDescription(page, "#definition-text")).toMatch(new RegExp(`^Not saved: one problem in it, at its place: Line ${line}, column 12 ?: max_turns: Invalid input: expected number, received string Saved as a change to revision`));
		expect(await field.getAttribute("aria-invalid")).toBe("true");
		await alert.getByRole("button", { name: `Line ${line}, column 12` }).click();
		expect(await field.evaluate((t) => { const a = t as unknown as { value: string; selectionStart: number }; return a.value.slice(a.selectionStart, a.selectionStart + 4); })).toBe("lots");
		expect(await page.evaluate<string | undefined>("document.activeElement?.id")).toBe("definition-text");
		expect(await stored()).toBe(7);
		// Mended and saved with Ctrl+Enter: the notice names both revisions, the definition is shown as saved.
		await field.fill(text.replace("max_turns: 7", "max_turns: 9"));
		expect(await field.getAttribute("aria-invalid")).toBeNull();
		await field.press("Control+Enter");
		await page.locator("#notice", { hasText: `Saved ${agent}'s definition: revision ` }).waitFor(LIVE);
		await body.locator("pre", { hasText: "max_turns: 9\n" }).waitFor(LIVE);
		expect(await stored()).toBe(9);
		// Closed and opened again mid-edit, the editor keeps what was typed.
		await body.getByRole("button", { name: "Edit" }).click();
		await field.fill((await field.inputValue()).replace("max_turns: 9", "max_turns: 12"));
		await page.locator("#agent-definition summary").click();
		await page.locator("#agent-definition summary").click();
		expect(await field.inputValue()).toContain("max_turns: 12\n");
		// Someone else changes the agent meanwhile: the save is refused, theirs kept, the text here too.
		const theirs = await call<{ definition: Record<string, unknown> }>("GET", `/v1/agents/${agent}`, tokens.read);
		await call("PUT", `/v1/agents/${agent}`, tokens.admin, { ...theirs.definition, max_turns: 11 });
		await page.getByRole("button", { name: "Save", exact: true }).click();
		await alert.locator("p", { hasText: `agent ${agent} has changed since revision ` }).waitFor(LIVE);
		expect(await alert.locator("p").textContent()).toMatch(/now; read it again and make the change there\. Your text is kept here\.$/);
		// Tied to the text, not marked wrong: the text is not what the refusal is of.
		expect(await accessibleDescription(page, "#definition-text")).toContain("Your text is kept here.");
		expect(await field.getAttribute("aria-invalid")).toBeNull();
		expect(await field.inputValue()).toContain("max_turns: 12\n");
		expect(await stored()).toBe(11);
		// Loading the current one is asked first, then replaces the text with theirs.
		await alert.getByRole("button", { name: "Load the current definition" }).click();
		await page.getByRole("dialog", { name: `Load ${agent}'s current definition` }).getByRole("button", { name: "Load it" }).click();
		await alert.waitFor({ state: "hidden", ...LIVE });
		expect(await field.inputValue()).toContain("max_turns: 11\n");
		// Cancel after a change is asked first; Discard goes back to the definition, unchanged.
		await field.fill((await field.inputValue()).replace("max_turns: 11", "max_turns: 3"));
		await page.getByRole("button", { name: "Cancel", exact: true }).click();
		const discard = page.getByRole("dialog", { name: `Discard your changes to ${agent}'s definition` });
		await discard.getByRole("button", { name: "Discard" }).click();
		await body.locator("pre", { hasText: "max_turns: 11\n" }).waitFor(LIVE);
		expect(await stored()).toBe(11);
		// Neither an operator nor a fleet.yaml agent is offered the editor.
		const operator = await signedIn(`/agents/${agent}/runs`, tokens.operate);
		await operator.locator("#runs-meta").waitFor(LIVE);
		await operator.locator("#agent-definition summary").click();
		await operator.locator("#agent-definition-body pre").waitFor(LIVE);
		expect(await operator.locator("#agent-definition-body").getByRole("button", { name: "Edit" }).isVisible()).toBe(false);
		await operator.close();
		await page.goto(`${url}/agents/triage/runs`);
		await page.locator("#agent-definition summary").click();
		await body.locator("pre").waitFor(LIVE);
		expect(await body.getByRole("button", { name: "Edit" }).count()).toBe(0);
		await page.close();
	});

	it("creates an agent from the fleet as YAML for an admin, and deletes it from its runs page, asked first", async () => {
		const agent = `dash-new-${run}`;
		const status = async () => (await fetch(`${url}/v1/agents/${agent}`, { headers: { authorization: `Bearer ${tokens.read}` } })).status;
		const page = await signedIn("/", tokens.admin);
		await page.getByRole("button", { name: "New agent" }).click();
		const field = page.getByLabel("New agent (YAML)");
		expect(await page.evaluate<string | undefined>("document.activeElement?.id")).toBe("definition-text");
		expect(await field.inputValue()).toContain("name: new-agent\nprompt: |\n");
		expect(await page.getByRole("button", { name: "New agent" }).isVisible()).toBe(false);
		// Cancel after a change is asked first; Discard closes it, nothing created.
		await field.fill(`name: ${agent}\nprompt: Watch db-9.\n`);
		await page.getByRole("button", { name: "Cancel", exact: true }).click();
		await page.getByRole("dialog", { name: "Discard the new agent" }).getByRole("button", { name: "Discard" }).click();
		await page.locator("#new-agent").waitFor({ state: "hidden", ...LIVE });
		expect(await page.evaluate<string | undefined>("document.activeElement?.id")).toBe("fleet-new");
		// Escape is Cancel: asked first after a change (an Escape there keeps the text), at once when unchanged.
		await page.getByRole("button", { name: "New agent" }).click();
		await field.fill(`name: ${agent}\nprompt: Watch db-9.\n`);
		await field.press("Escape");
		const asked = page.getByRole("dialog", { name: "Discard the new agent" });
		await asked.waitFor(LIVE);
		await page.keyboard.press("Escape");
		await asked.waitFor({ state: "hidden", ...LIVE });
		expect(await field.inputValue()).toBe(`name: ${agent}\nprompt: Watch db-9.\n`);
		expect(await page.evaluate<string | undefined>("document.activeElement?.id")).toBe("definition-text");
		await field.press("Escape");
		await asked.getByRole("button", { name: "Discard" }).click();
		await page.locator("#new-agent").waitFor({ state: "hidden", ...LIVE });
		await page.getByRole("button", { name: "New agent" }).click();
		await field.press("Escape");
		await page.locator("#new-agent").waitFor({ state: "hidden", ...LIVE });
		expect(await page.evaluate<string | undefined>("document.activeElement?.id")).toBe("fleet-new");
		expect(await status()).toBe(404);
		// A name the API refuses: said at its line, nothing created; mended, created with Ctrl+Enter.
		await page.getByRole("button", { name: "New agent" }).click();
		await field.fill(`name: Dash New\nprompt: Watch db-9.\n`);
		await page.getByRole("button", { name: "Create", exact: true }).click();
		const alert = page.locator("#new-agent [role=alert]");
		await alert.waitFor(LIVE);
		expect(await alert.locator("li").allTextContents()).toEqual([expect.stringMatching(/^Line 1, column 7: name: /)]);
		// Check asks what the create would do, storing nothing: its revision, each schedule's next run, its warnings.
		await field.fill(`name: ${agent}\nprompt: Watch db-9.\nwebhook: { secret: DASH_NEW_SECRET }\nschedules:\n  nightly: { cron: "0 3 * * *", timezone: UTC }\n`);
		await page.getByRole("button", { name: "Check", exact: true }).click();
		const checked = page.locator("#new-agent [role=status]");
		await checked.waitFor(LIVE);
		expect(await checked.locator("p").textContent()).toMatch(new RegExp(`^Would create ${agent} \\(revision [0-9a-f]{16}\\)\\.$`));
		expect(await checked.locator("li").allTextContents()).toEqual([
			expect.stringMatching(/^nightly 0 3 \* \* \* UTC · next .*03:00:00 UTC/),
			`Warning: secret DASH_NEW_SECRET (webhook trigger) is not set: POST /v1/hooks/${agent} answers 503`,
		]);
		expect(await status()).toBe(404);
		await field.press("Control+Enter");
		await page.waitForURL(`${url}/agents/${agent}/runs`, LIVE);
		await page.locator("#notice", { hasText: `Created ${agent} (revision ` }).waitFor(LIVE);
		expect(await status()).toBe(200);
		// Deleted from its runs page: asked first (Cancel keeps it), then the fleet says it.
		await page.locator("#agent-definition summary").click();
		await page.getByRole("button", { name: "Delete agent" }).click();
		const ask = page.getByRole("dialog", { name: `Delete ${agent}` });
		await ask.getByRole("button", { name: "Cancel" }).click();
		await ask.waitFor({ state: "detached", ...LIVE });
		expect(await status()).toBe(200);
		await page.getByRole("button", { name: "Delete agent" }).click();
		await ask.getByRole("button", { name: "Delete agent" }).click();
		await page.waitForURL(`${url}/`, LIVE);
		await page.locator("#notice", { hasText: `Deleted ${agent}: its jobs and runs stay readable` }).waitFor(LIVE);
		expect(await status()).toBe(404);
		await page.close();
		// An operator is offered neither.
		const operator = await signedIn("/", tokens.operate);
		await operator.locator("#fleet-table tbody tr").first().waitFor(LIVE);
		expect(await operator.getByRole("button", { name: "New agent" }).isVisible()).toBe(false);
		await operator.close();
	});

	it("duplicates an agent, a fleet.yaml one too, as a new API agent for an admin, from its definition under another name", async () => {
		const copy = `dash-dup-${run}`;
		const definitionOf = async (name: string) => (await call<{ definition: Record<string, unknown> }>("GET", `/v1/agents/${name}`, tokens.read)).definition;
		const page = await signedIn("/agents/triage/runs", tokens.admin);
		await page.locator("#runs-meta").waitFor(LIVE);
		const body = page.locator("#agent-definition-body");
		await page.locator("#agent-definition summary").click();
		await body.locator("pre").waitFor(LIVE);
		const original = (await body.locator("pre").textContent())!;
		await body.getByRole("button", { name: "Duplicate triage as a new agent" }).click();
		const field = page.getByLabel("New agent (YAML)");
		expect(await page.evaluate<string | undefined>("document.activeElement?.id")).toBe("definition-text");
		// The definition as shown, but for its name.
		expect(await field.inputValue()).toBe(original.replace(/^name: triage$/m, "name: triage-copy"));
		// Cancel, unchanged, goes back to the definition without asking.
		await page.getByRole("button", { name: "Cancel", exact: true }).click();
		await body.getByRole("button", { name: "Duplicate triage as a new agent" }).waitFor(LIVE);
		await body.getByRole("button", { name: "Duplicate triage as a new agent" }).click();
		await field.fill((await field.inputValue()).replace("name: triage-copy", `name: ${copy}`));
		await field.press("Control+Enter");
		await page.waitForURL(`${url}/agents/${copy}/runs`, LIVE);
		await page.locator("#notice", { hasText: `Created ${copy} (revision ` }).waitFor(LIVE);
		expect({ ...(await definitionOf(copy)), name: "triage" }).toEqual(await definitionOf("triage"));
		// The copy is an API agent: it can be edited, and duplicated in its turn.
		await page.locator("#agent-definition summary").click();
		await body.locator("p", { hasText: "Defined through the API" }).waitFor(LIVE);
		expect(await body.getByRole("button", { name: "Edit" }).isVisible()).toBe(true);
		expect(await body.getByRole("button", { name: `Duplicate ${copy} as a new agent` }).isVisible()).toBe(true);
		await page.close();
		// An operator is not offered it.
		const operator = await signedIn("/agents/triage/runs", tokens.operate);
		await operator.locator("#runs-meta").waitFor(LIVE);
		await operator.locator("#agent-definition summary").click();
		await operator.locator("#agent-definition-body pre").waitFor(LIVE);
		expect(await operator.getByRole("button", { name: "Duplicate triage as a new agent" }).isVisible()).toBe(false);
		await operator.close();
	});

	it("says an agent does not exist on its runs page, with no empty chart, legend or table left", async () => {
		const page = await signedIn("/agents/no-such-agent/runs");
		await page.locator("#notice", { hasText: "no-such-agent" }).waitFor(LIVE);
		expect(await page.locator("#runs-table").isVisible()).toBe(false);
		expect(await page.locator("#view .legend").isVisible()).toBe(false);
		expect(await page.locator("#runs-empty").isVisible()).toBe(false);
		expect(await page.locator("#runs-meta").textContent()).toBe("");
		await page.close();
	});


	it("shows control and bidirectional-control characters of a model's answer as visible escapes, so they cannot reorder or hide text", async () => {
		const agent = await createAgent(`dash-controls-${run}`, {});
		// A right-to-left override makes "evil\u202egpj.exe" read as "evilexe.jpg"; ESC, BEL and DEL draw as nothing or as boxes.
		await script({ text: "Saved \u001b[31mevil\u202egpj.exe\u0007\u007f here." });
		const job = await trigger(agent);
		expect(await settled(job.id)).toBe("completed");
		const shown = "Saved \\x1b[31mevil\\u202egpj.exe\\x07\\x7f here.";
		const page = await signedIn(`/jobs/${job.id}`, tokens.read);
		await page.locator("#log-state", { hasText: "ended" }).waitFor(LIVE);
		expect(await page.locator("#job-log li.t-assistant .body").first().textContent()).toContain(shown);
		expect(await page.locator("#job-summary").textContent()).toContain(shown);
		await page.goto(`${url}/jobs?agent=${agent}`);
		const summary = page.locator(`#jobs-table tr[data-job="${job.id}"] td.summary`);
		await summary.waitFor(LIVE);
		expect(await summary.textContent()).toContain(shown);
		await page.close();
	});


	it("works with a screen reader: named timeline links and row buttons, legible log numbers, and only new log lines announced", async () => {
		const agent = await createAgent(`dash-a11y-${run}`, {});
		const scheduled = await scheduledRuns(`dash-a11y-runs-${run}`);
		// The runs timeline is a group of links (not an image that hides them), each named for its job.
		const page = await signedIn(`/agents/${scheduled}/runs`, tokens.operate);
		const timeline = page.locator("#runs-chart svg.runs-timeline");
		await timeline.waitFor(LIVE);
		expect(await timeline.getAttribute("role")).not.toBe("img");
		const labels = await timeline.locator("a").evaluateAll((as) => as.map((a) => a.getAttribute("aria-label")));
		expect(labels.length).toBeGreaterThan(0);
		for (const label of labels) expect(label).toMatch(/^job job-\S+ · every-/);
		// A row's buttons say which agent they act on.
		await page.goto(`${url}/`);
		await page.getByRole("button", { name: `Run now: ${agent}`, exact: true }).waitFor(LIVE);
		expect(await page.getByRole("button", { name: `Pause ${agent}`, exact: true }).count()).toBe(1);

		// The log: not a live region itself; a line written while the page is open is announced, the stored ones are not.
		expect(await emulatorQueued()).toBe(0);
		await script({ delay_ms: 3000, then: { text: "A later answer." } });
		const job = await trigger(agent);
		// Its first line is stored before the page opens (the model's answer is seconds away).
		const storedLines = async () => (await (await fetch(`${url}/v1/jobs/${job.id}/output`, { headers: { authorization: `Bearer ${tokens.read}` } })).text()).trim().split("\n").filter(Boolean).length;
		await expect.poll(storedLines, LIVE).toBeGreaterThan(0);
		await page.goto(`${url}/jobs/${job.id}`);
		await page.locator("#job-log li[data-line='1']").waitFor(LIVE);
		expect(await page.locator("#job-log").getAttribute("aria-live")).toBeNull();
		const announced = page.locator("#log-announce");
		expect(await announced.textContent()).toBe("");
		await page.locator("#job-log li.t-assistant", { hasText: "A later answer." }).waitFor(LIVE);
		await expect.poll(() => announced.textContent(), LIVE).toContain("assistant: A later answer.");
		await page.locator("#log-state", { hasText: "ended" }).waitFor(LIVE);
		// A line's number against the log's background: at least 4.5:1.
		const [fg, bg] = await page.evaluate<string[]>(`[getComputedStyle(document.querySelector("#job-log li .n")).color, getComputedStyle(document.querySelector("#job-log")).backgroundColor]`);
		const luminance = (rgb: string) => {
			const [r, g, b] = rgb.match(/\d+/g)!.slice(0, 3).map((c) => Number(c) / 255).map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
			return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
		};
		const [hi, lo] = [luminance(fg!), luminance(bg!)].sort((a, b) => b - a);
		expect((hi! + 0.05) / (lo! + 0.05)).toBeGreaterThanOrEqual(4.5);
		await page.close();
	});


	it("announces a new log line cut between characters, never inside an emoji", async () => {
		const agent = await createAgent(`dash-announce-${run}`, {});
		expect(await emulatorQueued()).toBe(0);
		// The announcement keeps 160 characters of a line, which falls inside the emoji ("assistant: " is 11).
		await script({ delay_ms: 3000, then: { text: `A later answer. ${"x".repeat(132)}😀 and more` } });
		const job = await trigger(agent);
		const storedLines = async () => (await (await fetch(`${url}/v1/jobs/${job.id}/output`, { headers: { authorization: `Bearer ${tokens.read}` } })).text()).trim().split("\n").filter(Boolean).length;
		await expect.poll(storedLines, LIVE).toBeGreaterThan(0);
		const page = await signedIn(`/jobs/${job.id}`, tokens.read);
		await page.locator("#job-log li[data-line='1']").waitFor(LIVE);
		const announced = page.locator("#log-announce");
		await expect.poll(() => announced.textContent(), LIVE).toContain("assistant: A later answer.");
		expect(await announced.textContent()).toContain(`${"x".repeat(132)}😀…`);
		await page.close();
	});

	it("says the time zone of every absolute time: run slots, tooltips, the runs chart's axis and the log's times", async () => {
		const agent = await scheduledRuns(`dash-zone-runs-${run}`);
		// A browser in Los Angeles: its times are not UTC, and must not read as if they were.
		const zoned = await browser.newContext({ viewport: { width: 1280, height: 800 }, timezoneId: "America/Los_Angeles" });
		const page = await zoned.newPage();
		page.on("pageerror", (err) => pageErrors.push(`zoned: ${err.message}`));
		await signInOn(page, `/agents/${agent}/runs`, tokens.read);
		const zone = /(GMT-[78]|PST|PDT)$/;
		const slot = page.locator("#runs-table tbody tr td:first-child > span:first-child").first();
		await slot.waitFor(LIVE);
		expect(await slot.textContent()).toMatch(zone);
		expect(await page.locator("#runs-table time.rel").first().getAttribute("title")).toMatch(zone);
		expect(await page.locator("#runs-chart svg.runs-timeline text.zone").textContent()).toMatch(zone);
		const { jobs } = await call<{ jobs: JobRecord[] }>("GET", `/v1/jobs?agent=${agent}&limit=1`, tokens.read);
		await page.goto(`${url}/jobs/${jobs[0]!.id}`);
		await page.locator("#log-state", { hasText: "ended" }).waitFor(LIVE);
		expect(await page.locator("#log-zone").textContent()).toMatch(/^times (GMT-[78]|PST|PDT)$/);
		expect(await page.locator("#job-log li .ts").first().getAttribute("title")).toMatch(zone);
		await zoned.close();
	});


	it("draws the runs chart's gridlines at the viewer's round times, as its labels are local", async () => {
		// A zone half an hour off UTC: UTC's midnights and hours are not its own.
		const zoned = await browser.newContext({ timezoneId: "Asia/Kolkata" });
		const page = await zoned.newPage();
		const charts = readFileSync(new URL("../../src/dashboard/client/charts.client.js", import.meta.url), "utf8");
		const localTimes = (t0: string, t1: string) =>
			page.evaluate<string[]>(`(() => { ${charts}
				return timeTicks(Date.parse("${t0}"), Date.parse("${t1}"), 10).ticks.map((t) => new Date(t).toTimeString().slice(0, 5));
			})()`);
		const days = await localTimes("2026-11-20T00:00:00Z", "2026-11-26T00:00:00Z");
		expect(days.length).toBeGreaterThan(3);
		expect(new Set(days)).toEqual(new Set(["00:00"]));
		const hours = await localTimes("2026-11-20T00:00:00Z", "2026-11-20T09:00:00Z");
		expect(hours.length).toBeGreaterThan(3);
		expect(hours.every((h) => h.endsWith(":00"))).toBe(true);
		await zoned.close();
		// Across a DST change (New York, 2026-03-08): six-hour lines stay on 00, 06, 12 and 18.
		const eastern = await browser.newContext({ timezoneId: "America/New_York" });
		const east = await eastern.newPage();
		const sixes = await east.evaluate<string[]>(`(() => { ${charts}
			return timeTicks(Date.parse("2026-03-07T12:00:00Z"), Date.parse("2026-03-09T00:00:00Z"), 10).ticks.map((t) => new Date(t).toTimeString().slice(0, 5));
		})()`);
		expect(sixes.length).toBeGreaterThan(3);
		expect(new Set(sixes)).toEqual(new Set(["00:00", "06:00", "12:00", "18:00"]));
		await eastern.close();
	});

	it("words an ended job's missing usage and a pause made just now as they are", async () => {
		const agent = await createAgent(`dash-words-${run}`, {});
		await script({ error: 400, message: "the model refused the request (emulated)" });
		const job = await trigger(agent);
		expect(await settled(job.id)).toBe("failed");
		await call("POST", `/v1/agents/${agent}/pause`, tokens.operate, { reason: "checking words" });
		const page = await signedIn(`/jobs/${job.id}`, tokens.read);
		await page.locator("#job-status .badge", { hasText: "failed" }).waitFor(LIVE);
		// It has ended: no call is still to come.
		expect(await page.locator("#job-usage tbody").textContent()).toBe("No model calls.");
		await page.goto(`${url}/`);
		const since = page.locator(`#fleet-table tr[data-agent="${agent}"] .muted.small`);
		await since.waitFor(LIVE);
		// The exact time with its zone, then the relative one.
		expect(await since.textContent()).toMatch(/^since \d{1,2} \w{3} \d{4}, \d\d:\d\d:\d\d \S+ \((just now|\d+ seconds ago)\)$/);
		await page.close();
	});

});

// What a keyboard, screen-reader or low-vision operator gets (the accessibility QA pass's findings).
describe("the dashboard, for keyboard, screen-reader and low-vision operators", () => {
	it("marks the view busy until its first load is drawn: after signing in again, the earlier session's list is not offered as current", async () => {
		const { job } = await completedJob(`dash-first-load-${run}`);
		const page = await signedIn("/jobs", tokens.read);
		await viewReady(page);
		const rows = page.locator("#jobs-table tbody tr[data-job]");
		await page.locator(`#jobs-table tr[data-job="${job.id}"]`).waitFor(LIVE);
		await page.locator("#sign-out").click();
		let release = () => {};
		const held = new Promise<void>((resolve) => (release = resolve));
		let asked = 0;
		await page.route(
			(u) => u.pathname === "/v1/jobs" && u.searchParams.get("limit") === "25",
			async (route) => {
				asked++;
				await held;
				await route.continue();
			},
		);
		await page.locator("#token").fill(tokens.read);
		await page.locator("#signin-form button[type=submit]").click();
		await expect.poll(() => asked, LIVE).toBe(1);
		// The view is shown with the earlier session's rows while its list is asked for: busy.
		expect(await page.locator("#view").getAttribute("aria-busy")).toBe("true");
		expect(await rows.count()).toBeGreaterThan(0);
		release();
		await viewReady(page);
		expect(await rows.count()).toBeGreaterThan(0);
		await page.close();
	});

	/** What has the keyboard focus: its tag, id, name and text, and the row (data-agent/-job) it sits in. */
	const focused = (page: Page) =>
		page.evaluate<{ tag: string; id: string; label: string | null; text: string; row: string | null }>(`(() => {
			const el = document.activeElement;
			const row = el && el.closest("[data-agent], [data-job]");
			return { tag: el ? el.tagName : "", id: el ? el.id : "", label: el && el.getAttribute("aria-label"), text: el ? el.textContent.trim() : "", row: row && (row.dataset.agent || row.dataset.job) };
		})()`);
	/** The WCAG 2 contrast ratio of two computed colours ("rgb(…)"); an alpha one is laid over the second. */
	const contrast = (fg: string, bg: string) => {
		const rgba = (c: string) => c.match(/[\d.]+/g)!.map(Number);
		const [br, bgG, bb] = rgba(bg);
		const [r, g, b, a = 1] = rgba(fg);
		const over = [r! * a + br! * (1 - a), g! * a + bgG! * (1 - a), b! * a + bb! * (1 - a)];
		const lum = (c: number[]) => {
			const [x, y, z] = c.map((v) => v / 255).map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
			return 0.2126 * x! + 0.7152 * y! + 0.0722 * z!;
		};
		const [hi, lo] = [lum(over), lum([br!, bgG!, bb!])].sort((p, q) => q - p);
		return (hi! + 0.05) / (lo! + 0.05);
	};
	/** Computed style properties of the first element matching each selector. */
	const styleOf = (page: Page, sel: string, props: string[], pseudo?: string) =>
		page.evaluate<string[]>(`(() => { const s = getComputedStyle(document.querySelector(${JSON.stringify(sel)}), ${JSON.stringify(pseudo ?? null)}); return ${JSON.stringify(props)}.map((p) => s.getPropertyValue(p)); })()`);

	it("keeps keyboard focus on something meaningful after Download, Approve, Cancel, Pause, Resume and the last Older", async () => {
		// Download: the button keeps the focus (it was disabled while it ran, which sent focus to the page).
		const { agent, job: approving } = await awaitingApproval(`dash-kbd-${run}`, { text: "Filed." }, { max_concurrent: 1 });
		const page = await signedIn(`/jobs/${approving.id}`);
		await page.locator("#job-approval").waitFor({ state: "visible", ...LIVE });
		await page.locator("#job-download").focus();
		await Promise.all([page.waitForEvent("download"), page.keyboard.press("Enter")]);
		await expect.poll(async () => (await focused(page)).id, LIVE).toBe("job-download");

		// Approve: the panel goes, and focus goes to the job's heading, which says its new status.
		await page.locator("#approval-approve").focus();
		await page.keyboard.press("Enter");
		await page.locator("#job-approval").waitFor({ state: "hidden", ...LIVE });
		await expect.poll(async () => (await focused(page)).tag, LIVE).toBe("H1");
		expect((await focused(page)).text).toContain(approving.id);
		expect(await settled(approving.id)).toBe("completed");

		// Cancel: the button goes with the running job, and focus goes to the heading.
		await script({ hang: true });
		const running = await trigger(agent, "Hold the slot.");
		await expect.poll(async () => (await getJob(running.id)).status, LIVE).toBe("running");
		await page.goto(`${url}/jobs/${running.id}`);
		await page.locator("#job-status .badge", { hasText: "running" }).waitFor(LIVE);
		await page.locator("#job-cancel").focus();
		await page.keyboard.press("Enter");
		const ask = page.getByRole("dialog", { name: `Cancel job ${running.id}` });
		await ask.waitFor();
		await page.keyboard.press("Enter");
		await page.locator("#job-status .badge", { hasText: "cancelled" }).waitFor(LIVE);
		await ask.waitFor({ state: "hidden" });
		await expect.poll(async () => (await focused(page)).tag, LIVE).toBe("H1");
		expect((await focused(page)).text).toContain("cancelled");

		// Pause and Resume: focus goes to the row's new Resume, then Pause, button.
		await page.goto(`${url}/`);
		const row = page.locator(`#fleet-table tr[data-agent="${agent}"]`);
		await row.locator("button", { hasText: "Pause" }).focus();
		await page.keyboard.press("Enter");
		await page.getByRole("dialog", { name: `Pause ${agent}` }).waitFor();
		await page.keyboard.press("Enter");
		await row.locator(".badge", { hasText: "paused" }).waitFor(LIVE);
		await expect.poll(() => focused(page), LIVE).toMatchObject({ tag: "BUTTON", text: "Resume", row: agent });
		await page.keyboard.press("Enter");
		await row.locator(".badge", { hasText: "active" }).waitFor(LIVE);
		await expect.poll(() => focused(page), LIVE).toMatchObject({ tag: "BUTTON", text: "Pause", row: agent });
		await page.close();

		// The last "Older": the button goes, and focus goes to the first row it added.
		const jobs = Array.from({ length: 27 }, (_, i) => ({
			id: `job-2020-01-01-older${String(i).padStart(2, "0")}`, agent, schedule: null, trigger_type: "manual", status: "completed", exit_reason: "success",
			dispatch: "manual", scheduled_instant: null, created_at: "2020-01-01T00:00:00Z", started_at: "2020-01-01T00:00:01Z", finished_at: "2020-01-01T00:00:02Z",
			duration_seconds: 1, summary: "done", revision: 3, tool_calls: { made: 0, failed: 0 },
		}));
		const list = await context.newPage();
		await list.route(
			(u) => u.pathname === "/v1/jobs",
			(route) => {
				const cursor = new URL(route.request().url()).searchParams.get("cursor");
				return route.fulfill({ json: cursor ? { jobs: jobs.slice(25), next_cursor: null } : { jobs: jobs.slice(0, 25), next_cursor: "c1" } });
			},
		);
		await signInOn(list, `/jobs`, tokens.read);
		await list.locator("#jobs-table tbody tr").nth(24).waitFor(LIVE);
		await list.locator("#jobs-older").focus();
		await list.keyboard.press("Enter");
		await list.locator("#jobs-older").waitFor({ state: "hidden", ...LIVE });
		await expect.poll(() => focused(list), LIVE).toMatchObject({ tag: "A", row: jobs[25]!.id });
		await list.close();
	});

	it("keeps keyboard focus on something meaningful after Deny and after the fleet's All agents", async () => {
		const { job } = await awaitingApproval(`dash-kbd2-${run}`, { text: "Not filed." });
		const page = await signedIn(`/jobs/${job.id}`);
		await page.locator("#job-approval").waitFor({ state: "visible", ...LIVE });
		await page.locator("#approval-deny").focus();
		await page.keyboard.press("Enter");
		const deny = page.getByRole("dialog", { name: "Deny the call to create_ticket" });
		await deny.getByRole("button", { name: "Deny", exact: true }).focus();
		await page.keyboard.press("Enter");
		await page.locator("#job-approval").waitFor({ state: "hidden", ...LIVE });
		await expect.poll(async () => (await focused(page)).tag, LIVE).toBe("H1");
		expect((await focused(page)).text).toContain(job.id);
		expect(await settled(job.id)).toBe("completed");
		await page.close();

		// All agents: both paging buttons go once every agent is shown; the first agent it added has the focus.
		const fleet = await context.newPage();
		const { agents } = await fakeFleet(fleet, 150);
		await signInOn(fleet, `/`, tokens.read);
		await fleet.locator("#fleet-all").waitFor(LIVE);
		await fleet.locator("#fleet-all").focus();
		await fleet.keyboard.press("Enter");
		await fleet.locator("#fleet-all").waitFor({ state: "hidden", ...LIVE });
		await expect.poll(() => focused(fleet), LIVE).toMatchObject({ tag: "A", row: agents[100]!.name });
		await fleet.close();
	});

	it("says once, not at every failed poll, that the server is unreachable", async () => {
		const page = await signedIn("/jobs", tokens.read, { fakeClock: true });
		await page.locator("#jobs-meta", { hasText: /jobs?|shown/ }).waitFor(LIVE);
		await page.route((u) => u.pathname === "/v1/jobs", (route) => route.abort("connectionrefused"));
		const polled = await watchTimers(page, 10_000);
		await page.evaluate(`(() => {
			window.noticeChanges = 0;
			new MutationObserver((records) => { window.noticeChanges += records.length; })
				.observe(document.querySelector("#notice"), { childList: true, subtree: true, characterData: true, attributes: true });
		})()`);
		await page.clock.runFor(10_000);
		await expect.poll(polled, LIVE).toBe(1);
		await page.locator("#notice", { hasText: "The drover server is unreachable" }).waitFor(LIVE);
		const first = await page.evaluate<number>("window.noticeChanges");
		expect(first).toBeGreaterThan(0);
		for (const n of [2, 3]) {
			await page.clock.runFor(10_000);
			await expect.poll(polled, LIVE).toBe(n);
		}
		// Two more failed polls, the same message: not rebuilt, so not read out again.
		expect(await page.evaluate<number>("window.noticeChanges")).toBe(first);
		await page.close();
	});

	it("announces an approval input's error and ties it to the field", async () => {
		const { job } = await awaitingApproval(`dash-invalid-${run}`, { text: "Filed." });
		const page = await signedIn(`/jobs/${job.id}`);
		await page.locator("#job-approval").waitFor({ state: "visible", ...LIVE });
		const input = page.locator("#approval-input");
		expect(await input.getAttribute("aria-invalid")).not.toBe("true");
		await input.fill("{ not json");
		await page.locator("#approval-approve").click();
		const error = page.getByRole("alert").filter({ hasText: "The input is not valid JSON" });
		await error.waitFor(LIVE);
		expect(await error.getAttribute("id")).toBe("approval-error");
		expect(await input.getAttribute("aria-invalid")).toBe("true");
		expect((await input.getAttribute("aria-describedby"))?.split(" ")).toContain("approval-error");
		// Input the tool's schema refuses: the same.
		await input.fill(JSON.stringify({ title: 5 }));
		expect(await input.getAttribute("aria-invalid")).not.toBe("true");
		await page.locator("#approval-approve").click();
		await page.getByRole("alert").filter({ hasText: "does not match create_ticket's input_schema" }).waitFor(LIVE);
		expect(await input.getAttribute("aria-invalid")).toBe("true");
		await input.fill(JSON.stringify({ title: "Disk full" }));
		await page.locator("#approval-approve").click();
		expect(await settled(job.id)).toBe("completed");
		await page.close();
	});

	it("says each problem of an approval's input once, as one sentence each, not with doubled punctuation", async () => {
		const tool = { ...TICKET_TOOL, input_schema: { type: "object", properties: { title: { type: "string" }, body: { type: "string" } }, required: ["title", "body"] } };
		const { job } = await awaitingApproval(`dash-issues-${run}`, { text: "Filed." }, { tools: [tool] });
		const page = await signedIn(`/jobs/${job.id}`);
		await page.locator("#job-approval").waitFor({ state: "visible", ...LIVE });
		await page.locator("#approval-input").fill(JSON.stringify({ title: 5 }));
		await page.locator("#approval-approve").click();
		const error = page.locator("#approval-error", { hasText: "does not match create_ticket's input_schema" });
		await error.waitFor(LIVE);
		const text = (await error.textContent())!;
		// Both problems, each its own clause (the missing body, the type of title), joined by "; " alone.
		expect(text).toContain('tool_input: Instance does not have required property "body"');
		expect(text).toContain('tool_input/title: Instance type "number" is invalid. Expected "string"');
		expect(text).not.toMatch(/[.;:,][.;]/);
		await call("POST", `/v1/jobs/${job.id}/approval`, tokens.operate, { decision: "deny" });
		await page.close();
	});

	it("shows a job's times as the exact time with its zone, beside the relative one, on its page and in the jobs list", async () => {
		const agent = await createAgent(`dash-exact-${run}`, {});
		await script({ text: "Done." });
		const job = await trigger(agent, "Go.");
		expect(await settled(job.id)).toBe("completed");
		const zoned = await browser.newContext({ viewport: { width: 1280, height: 800 }, timezoneId: "America/Los_Angeles" });
		const page = await zoned.newPage();
		await signInOn(page, `/jobs/${job.id}`, tokens.read);
		await page.locator("#job-status .badge", { hasText: "completed" }).waitFor(LIVE);
		const exact = /\d{1,2} \w{3} \d{4}, \d\d:\d\d:\d\d (GMT-[78]|PST|PDT)/;
		for (const fact of ["Created", "Started", "Finished"]) {
			const dd = page.locator(`#job-facts dt:text-is("${fact}") + dd`);
			expect(await dd.textContent()).toMatch(exact);
			expect(await dd.textContent()).toMatch(/ago|just now/);
		}
		await page.goto(`${url}/jobs?agent=${agent}`);
		const started = page.locator(`#jobs-table tr[data-job="${job.id}"] td:nth-child(5)`);
		await started.waitFor(LIVE);
		expect(await started.textContent()).toMatch(/\d\d:\d\d:\d\d (GMT-[78]|PST|PDT)/);
		await zoned.close();
	});

	it("puts the runs timeline in the tab order once, moved through with the arrow keys", async () => {
		const agent = `dash-tabs-${run}`;
		const at = (i: number) => new Date(Date.UTC(2020, 0, 1, 0, i * 15)).toISOString();
		const runs = Array.from({ length: 60 }, (_, i) => ({
			id: `occ-${i}`, schedule: "every-15m", source: "cron", scheduled_instant: at(60 - i), dispatch: "on_time", claimed_at: at(60 - i),
			status: i === 3 ? "skipped" : "completed", skip_reason: i === 3 ? "paused" : null, skipped_count: null, skipped_from: null,
			job_id: i === 3 ? null : `job-2020-01-01-tabs${String(i).padStart(3, "0")}`, error: null, delivery_outcome: null,
		}));
		const page = await context.newPage();
		await page.route((u) => u.pathname === `/v1/agents/${agent}/runs`, (route) => route.fulfill({ json: { runs, next_cursor: null } }));
		await page.route((u) => u.pathname === `/v1/agents/${agent}/sessions/current`, (route) => route.fulfill({ status: 404, json: { error: { code: "not_found", message: "no agent" } } }));
		await signInOn(page, `/agents/${agent}/runs`, tokens.read);
		await page.locator("#runs-table tbody tr").nth(59).waitFor(LIVE);
		// From the last stop before the chart (the notepad's summary, below the definition's).
		await page.locator("#agent-notepad summary").focus();
		let presses = 0;
		const inTable = () => page.evaluate<boolean>(`!!document.activeElement.closest("#runs-table")`);
		while (!(await inTable()) && presses < 80) {
			await page.keyboard.press("Tab");
			presses++;
		}
		// The chart is one tab stop: the table's first link is the second.
		expect(presses).toBe(2);
		// Back on the chart, the arrow keys go from mark to mark.
		await page.keyboard.press("Shift+Tab");
		const label = () => page.evaluate<string | null>(`document.activeElement.closest("#runs-chart") && document.activeElement.getAttribute("aria-label")`);
		const first = await label();
		expect(first).toMatch(/^job job-2020-01-01-tabs\d+ · every-15m/);
		await page.keyboard.press("ArrowLeft");
		const second = await label();
		expect(second).toMatch(/^job job-2020-01-01-tabs\d+ · every-15m/);
		expect(second).not.toBe(first);
		// Named by its job once: the id is not said again at its end.
		expect(first!.match(/job-2020-01-01-tabs\d+/g)).toHaveLength(1);
		await page.close();
	});

	it("names each Run now button so that it starts with what it shows", async () => {
		const page = await signedIn("/");
		const row = page.locator('#fleet-table tr[data-agent="daily-digest"]');
		await row.waitFor(LIVE);
		expect(await row.getByRole("button", { name: "Run now", exact: false }).count()).toBe(1);
		const name = await row.locator("button", { hasText: "Run now" }).getAttribute("aria-label");
		expect(name).toMatch(/^Run now\b/);
		expect(name).toContain("daily-digest");
		await page.close();
	});

	/** The jobs list, signed in: its filters, buttons and page background, and room for elements to measure. */
	const jobsPage = async () => {
		const page = await signedIn("/jobs");
		await page.locator("#jobs-meta", { hasText: /jobs?|shown/ }).waitFor(LIVE);
		return page;
	};

	it("draws form controls' and buttons' borders at 3:1 against the page and their own fill", async () => {
		const page = await jobsPage();
		const [pageBg] = await styleOf(page, "body", ["background-color"]);
		await page.evaluate(`document.querySelector("#view").append(Object.assign(document.createElement("button"), { className: "danger", id: "probe-danger", textContent: "Cancel" }), Object.assign(document.createElement("button"), { id: "probe-button", textContent: "Pause" }))`);
		for (const sel of ["#jobs-filter input[name=agent]", "#jobs-filter select[name=status]", "#probe-button", "#probe-danger"]) {
			const [border, fill] = await styleOf(page, sel, ["border-top-color", "background-color"]);
			expect(contrast(border!, pageBg!), `${sel} border on the page`).toBeGreaterThanOrEqual(3);
			expect(contrast(border!, fill!), `${sel} border on its fill`).toBeGreaterThanOrEqual(3);
		}
		await page.close();
	});

	it("draws links on the page and in an auto-paused row, and the grey badges, at 4.5:1", async () => {
		const page = await jobsPage();
		const [pageBg] = await styleOf(page, "body", ["background-color"]);
		await page.evaluate(`document.querySelector("#view").insertAdjacentHTML("beforeend",
			'<a id="probe-link" href="/">Logs</a><table class="grid"><tbody><tr class="auto-paused"><td id="probe-warn-td"><a id="probe-warn-link" href="/">x</a></td></tr></tbody></table>' +
			'<span id="probe-disabled" class="badge disabled">disabled</span><span id="probe-skipped" class="badge s-skipped">skipped</span>')`);
		const [link] = await styleOf(page, "#probe-link", ["color"]);
		expect(contrast(link!, pageBg!), "a link on the page").toBeGreaterThanOrEqual(4.5);
		const [warnLink] = await styleOf(page, "#probe-warn-link", ["color"]);
		const [warnBg] = await styleOf(page, "#probe-warn-td", ["background-color"]);
		expect(contrast(warnLink!, warnBg!), "a link in an auto-paused row").toBeGreaterThanOrEqual(4.5);
		for (const sel of ["#probe-disabled", "#probe-skipped"]) {
			const [fg, bg] = await styleOf(page, sel, ["color", "background-color"]);
			expect(contrast(fg!, bg!), sel).toBeGreaterThanOrEqual(4.5);
		}
		await page.close();
	});

	it("underlines a link inside muted text (a fleet row's logs), as its colour alone hardly differs", async () => {
		const page = await signedIn("/");
		await page.locator("#fleet-table tr[data-agent='daily-digest'] .sub a", { hasText: "logs" }).waitFor(LIVE);
		expect((await styleOf(page, "#fleet-table tr[data-agent='daily-digest'] .sub a", ["text-decoration-line"]))[0]).toContain("underline");
		await page.close();
	});

	it("stops the live log's pulsing dot for a reader who asked for less motion", async () => {
		const page = await jobsPage();
		await page.evaluate(`document.querySelector("#view").insertAdjacentHTML("beforeend", '<section class="panel"><span id="probe-live" class="pill live">live</span></section>')`);
		expect((await styleOf(page, "#probe-live", ["animation-name"], "::before"))[0]).toBe("pulse");
		await page.emulateMedia({ reducedMotion: "reduce" });
		expect((await styleOf(page, "#probe-live", ["animation-name"], "::before"))[0]).toBe("none");
		await page.close();
	});

	it("names the incidents table's actions column", async () => {
		const page = await signedIn("/incidents");
		await page.locator("#incidents-meta", { hasText: /incident|shown/ }).waitFor(LIVE);
		expect(await page.getByRole("columnheader", { name: "Actions" }).count()).toBe(1);
		await page.close();
	});

	it("keeps a queued job's \"not started yet\" line current, as the record's times are", async () => {
		const agent = await createAgent(`dash-queued-${run}`, { max_concurrent: 1 });
		await script({ hang: true });
		const running = await trigger(agent, "Hold the slot.");
		await expect.poll(async () => (await getJob(running.id)).status, LIVE).toBe("running");
		const queued = await trigger(agent, "Wait.");
		const page = await pageOfItsOwn();
		await page.clock.install();
		// Its stream says nothing meanwhile, so the record is drawn once: the line has to keep itself current.
		await page.route((u) => u.pathname === `/v1/jobs/${queued.id}/stream`, () => {});
		await signInOn(page, `/jobs/${queued.id}`, tokens.read);
		const line = page.locator("#job-transitions li");
		await line.filter({ hasText: /^Created (just now|\d+ seconds ago); not started yet\.$/ }).waitFor(LIVE);
		await page.clock.runFor(180_000);
		await expect.poll(() => line.textContent(), LIVE).toMatch(/^Created 3 minutes ago; not started yet\.$/);
		await page.close();
		for (const j of [queued, running]) await call("POST", `/v1/jobs/${j.id}/cancel`, tokens.operate, {});
	});

	it("gives the view's heading the focus after signing in, and says a refused token ended the session", async () => {
		const page = await signedIn("/jobs", tokens.read);
		await expect.poll(() => focused(page), LIVE).toMatchObject({ tag: "H1", text: "Jobs" });
		// The token is refused mid-session (revoked, expired): the next request signs out, saying so.
		await page.route((u) => u.pathname === "/v1/jobs", (route) => route.fulfill({ status: 401, json: { error: { code: "unauthorized", message: "invalid token" } } }));
		await page.locator("#jobs-filter select[name=status]").selectOption("running");
		const error = page.locator("#signin-error");
		await error.waitFor({ state: "visible", ...LIVE });
		expect(await error.textContent()).toMatch(/^Your token was refused\b.*expired or been revoked.*: invalid token$/);
		await page.close();
	});

	it("says an action's success politely, and keeps it until the next action", async () => {
		const agent = await createAgent(`dash-ok-${run}`, {});
		await call("POST", `/v1/agents/${agent}/pause`, tokens.operate, {});
		const page = await signedIn("/", tokens.operate, { fakeClock: true });
		const row = page.locator(`#fleet-table tr[data-agent="${agent}"]`);
		await row.locator("button", { hasText: "Resume" }).click();
		const notice = page.locator("#notice", { hasText: `Resumed ${agent}` });
		await notice.waitFor(LIVE);
		expect(await notice.getAttribute("role")).toBe("status");
		// Still there a while later, for a reader who was looking elsewhere.
		await page.clock.runFor(6_000);
		expect(await notice.isVisible()).toBe(true);
		// The next action takes it away: it is not that one's outcome.
		await row.locator("button", { hasText: "Pause" }).click();
		await page.getByRole("dialog", { name: `Pause ${agent}` }).waitFor();
		expect(await page.locator("#notice").isVisible()).toBe(false);
		await page.keyboard.press("Escape");
		// A failure is still an alert.
		await call("POST", `/v1/agents/${agent}/pause`, tokens.operate, {});
		await page.clock.runFor(10_000);
		await page.route((u) => u.pathname === `/v1/agents/${agent}/resume`, (route) => route.fulfill({ status: 500, json: { error: { code: "internal", message: "it broke" } } }));
		await row.locator("button", { hasText: "Resume" }).click();
		await page.getByRole("alert").filter({ hasText: "it broke" }).waitFor(LIVE);
		await page.close();
	});

	it("keeps the runs legend's swatches and marks the current section in forced-colours (high contrast) mode", async () => {
		const page = await signedIn("/jobs");
		await page.locator("#jobs-meta", { hasText: /jobs?|shown/ }).waitFor(LIVE);
		await page.evaluate(`document.querySelector("#view").insertAdjacentHTML("beforeend", '<ul class="legend"><li><span id="probe-swatch" class="swatch run-failed"></span>failed</li></ul>')`);
		await page.emulateMedia({ forcedColors: "active" });
		const [swatch] = await styleOf(page, "#probe-swatch", ["background-color"]);
		expect(swatch).toBe("rgb(224, 49, 49)");
		const [line] = await styleOf(page, '.topbar nav a[aria-current="page"]', ["text-decoration-line"]);
		expect(line).toContain("underline");
		const [other] = await styleOf(page, '.topbar nav a:not([aria-current])', ["text-decoration-line"]);
		expect(other).not.toContain("underline");
		await page.close();
	});

	it("titles a missing job's or agent's page as not found", async () => {
		const page = await signedIn("/jobs/job-2026-01-01-zzzzzz", tokens.read);
		await page.locator("#notice", { hasText: "no job job-2026-01-01-zzzzzz" }).waitFor(LIVE);
		expect(await page.title()).toBe("Job not found · drover");
		for (const view of ["runs", "logs"]) {
			await page.goto(`${url}/agents/no-such-agent-${run}/${view}`);
			await page.locator("#notice", { hasText: "no-such-agent" }).waitFor(LIVE);
			expect(await page.title()).toBe("Agent not found · drover");
		}
		await page.close();
	});

	it("says there are no jobs yet when no filter is set, and that none match when one is", async () => {
		const page = await context.newPage();
		await page.route((u) => u.pathname === "/v1/jobs", (route) => route.fulfill({ json: { jobs: [], next_cursor: null } }));
		await signInOn(page, `/jobs`, tokens.read);
		const empty = page.locator("#jobs-empty");
		await empty.waitFor(LIVE);
		expect(await empty.textContent()).toBe("No jobs yet: they appear here when an agent runs.");
		await page.locator("#jobs-filter select[name=status]").selectOption("running");
		await expect.poll(() => empty.textContent(), LIVE).toBe("No jobs match.");
		await page.close();
	});

	it("says there is no such agent when the agent filter names none, as the CLI does, and only that none match for an agent without jobs", async () => {
		const nope = `nope-${run}`;
		// The list itself answers an unknown agent's filter as an idle one's: empty.
		expect(await call<{ jobs: unknown[] }>("GET", `/v1/jobs?agent=${nope}`, tokens.read)).toEqual({ jobs: [], next_cursor: null });
		const page = await signedIn(`/jobs?agent=${nope}`, tokens.read);
		const empty = page.locator("#jobs-empty");
		await empty.waitFor(LIVE);
		expect(await empty.textContent()).toBe(`No jobs match: no agent named ${nope}.`);
		// An agent that exists but has run nothing: none match, nothing more.
		const idle = await createAgent(`dash-idle-${run}`, {});
		const agent = page.locator("#jobs-filter input[name=agent]");
		await agent.fill(idle);
		await agent.press("Enter");
		await expect.poll(() => empty.textContent(), LIVE).toBe("No jobs match.");
		await page.close();
	});

	it("wraps a 63-character agent name in the fleet rather than widen its column", async () => {
		const page = await context.newPage();
		const { agents } = await fakeFleet(page, 3);
		const long = "a-very-long-agent-name-for-accessibility-testing-xxxxxxxxxxxxxx";
		agents[0]!.name = long;
		await signInOn(page, `/`, tokens.read);
		const name = page.locator(`#fleet-table tr[data-agent="${long}"] td strong a`);
		await name.waitFor(LIVE);
		// On two lines, about 250px wide: it was one line of about 530px.
		const box = (await name.boundingBox())!;
		expect(box.width).toBeLessThanOrEqual(260);
		expect(box.height).toBeGreaterThan(25);
		expect(await name.textContent()).toBe(long);
		await page.close();
	});

	it("says the jobs list's count as a status, left alone by a poll that changes nothing", async () => {
		const jobs = [{ id: "job-2020-01-01-count0", agent: "x", schedule: null, trigger_type: "manual", status: "completed", exit_reason: "success", dispatch: "manual", scheduled_instant: null, created_at: "2020-01-01T00:00:00Z", started_at: "2020-01-01T00:00:01Z", finished_at: "2020-01-01T00:00:02Z", duration_seconds: 1, summary: "done", revision: 3, tool_calls: { made: 0, failed: 0 } }];
		const page = await pageOfItsOwn();
		await page.clock.install();
		await page.route((u) => u.pathname === "/v1/jobs", (route) => route.fulfill({ json: { jobs, next_cursor: null } }));
		await signInOn(page, `/jobs`, tokens.read);
		const meta = page.getByRole("status").filter({ hasText: "1 job" });
		await meta.waitFor(LIVE);
		expect(await meta.getAttribute("id")).toBe("jobs-meta");
		const polled = await watchTimers(page, 10_000);
		await page.evaluate(`(() => {
			window.metaChanges = 0;
			new MutationObserver((records) => { window.metaChanges += records.length; }).observe(document.querySelector("#jobs-meta"), { childList: true, subtree: true, characterData: true });
		})()`);
		await page.clock.runFor(10_000);
		await expect.poll(polled, LIVE).toBe(1);
		expect(await page.evaluate<number>("window.metaChanges")).toBe(0);
		await page.close();
	});

	it("says on an agent's logs page when a job starts and ends, and a live line without its usage", async () => {
		const agent = await createAgent(`dash-follow-${run}`, {});
		expect(await emulatorQueued()).toBe(0);
		const page = await signedIn(`/agents/${agent}/logs`, tokens.read);
		await page.locator("#agent-logs-meta", { hasText: "no job running" }).waitFor(LIVE);
		const announced = page.locator("#agent-logs-announce");
		expect(await announced.getAttribute("aria-live")).toBe("polite");
		await script({ delay_ms: 3000, then: { text: "A later answer." } });
		const job = await trigger(agent);
		await expect.poll(() => announced.textContent(), LIVE).toMatch(new RegExp(`^Job ${job.id} (started|completed)`));
		await expect.poll(() => announced.textContent(), LIVE).toBe(`Job ${job.id} completed.`);
		// The job's own page announces a line written while it is open, without the usage after it.
		await script({ delay_ms: 3000, then: { text: "Another answer." } });
		const next = await trigger(agent);
		const storedLines = async () => (await (await fetch(`${url}/v1/jobs/${next.id}/output`, { headers: { authorization: `Bearer ${tokens.read}` } })).text()).trim().split("\n").filter(Boolean).length;
		await expect.poll(storedLines, LIVE).toBeGreaterThan(0);
		await page.goto(`${url}/jobs/${next.id}`);
		await page.locator("#job-log li.t-assistant .ts", { hasText: "[in " }).waitFor(LIVE);
		const line = page.locator("#log-announce");
		await expect.poll(() => line.textContent(), LIVE).toContain("assistant: Another answer.");
		expect(await line.textContent()).not.toContain("[in ");
		await page.close();
	});

	it("ties a refused token's message to the token field, which is marked invalid until it is edited", async () => {
		const page = await open("/");
		await page.locator("#signin").waitFor({ state: "visible" });
		const field = page.locator("#token");
		expect(await accessibleDescription(page, "#token")).toBeFalsy();
		await field.fill("not-a-real-token-0000000000");
		await page.locator("#signin-form button[type=submit]").click();
		await page.locator("#signin-error").waitFor({ state: "visible", ...LIVE });
		// Said with the field, which has the focus again: not only by the alert, which the focus's announcement may cut off.
		expect(await page.evaluate<string | undefined>("document.activeElement?.id")).toBe("token");
		expect(await accessibleDescription(page, "#token")).toBe("That token was refused: invalid token.");
		expect(await field.getAttribute("aria-invalid")).toBe("true");
		await field.fill(tokens.read);
		expect(await field.getAttribute("aria-invalid")).toBeNull();
		await page.locator("#signin-form button[type=submit]").click();
		await page.locator("#sign-out").click();
		await page.locator("#signin").waitFor({ state: "visible" });
		expect(await accessibleDescription(page, "#token")).toBeFalsy();
		await page.close();
	});

	it("titles the sign-in screen as such, and gives the view its own title back once signed in", async () => {
		const page = await open("/usage");
		await page.locator("#signin").waitFor({ state: "visible" });
		// A tab of the sign-in is told apart from the view's, which it does not show.
		expect(await page.title()).toBe("Sign in · drover");
		await page.locator("#token").fill(tokens.read);
		await page.locator("#signin-form button[type=submit]").click();
		await page.locator("#view").waitFor({ state: "visible" });
		expect(await page.title()).toBe("Usage · drover");
		await page.locator("#sign-out").click();
		await page.locator("#signin").waitFor({ state: "visible" });
		expect(await page.title()).toBe("Sign in · drover");
		await page.close();
	});

	it("puts a box that scrolls with nothing in it to focus in the tab order while it scrolls: a job's usage table on a phone, and a long definition", async () => {
		const { agent, job } = await completedJob(`dash-scroller-${run}`);
		const page = await signedIn(`/jobs/${job.id}`, tokens.read);
		const usage = page.locator(".table-wrap:has(#job-usage)");
		await page.locator("#job-usage tbody td").first().waitFor(LIVE);
		// At a laptop's width it does not scroll: no tab stop of its own.
		await expect.poll(() => usage.getAttribute("tabindex"), LIVE).toBeNull();
		await page.setViewportSize({ width: 390, height: 844 });
		await expect.poll(() => usage.getAttribute("tabindex"), LIVE).toBe("0");
		// Reached with Tab, and scrolled to its last columns with the arrow keys.
		await page.locator("#job-manifest summary").focus();
		await page.keyboard.press("Tab");
		expect(await usage.evaluate((el) => el === (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement)).toBe(true);
		await page.keyboard.press("End");
		await page.keyboard.press("ArrowRight");
		await expect.poll(() => usage.evaluate((el) => el.scrollLeft), LIVE).toBeGreaterThan(0);
		await page.setViewportSize({ width: 1280, height: 800 });
		await page.locator("#job-download").focus();
		await expect.poll(() => usage.getAttribute("tabindex"), LIVE).toBeNull();
		// A definition longer than its box (16rem) scrolls in it: in the tab order, a short prompt's box not.
		await call("PUT", `/v1/agents/${agent}`, tokens.admin, { name: agent, prompt: Array.from({ length: 40 }, (_, i) => `Step ${i + 1}.`).join("\n"), timeout: "5m" });
		await page.goto(`${url}/agents/${agent}/runs`);
		await page.locator("#agent-definition summary").click();
		const definition = page.locator("#agent-definition-body pre");
		await definition.waitFor(LIVE);
		await expect.poll(() => definition.getAttribute("tabindex"), LIVE).toBe("0");
		await page.goto(`${url}/jobs/${job.id}`);
		await page.locator("#job-prompt", { hasText: "Go." }).waitFor(LIVE);
		// The box is looked at a frame after it changes: two frames on, it has been.
		await page.evaluate("new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))");
		expect(await page.locator("#job-prompt").getAttribute("tabindex")).toBeNull();
		await page.close();
	});

	it("passes axe-core's WCAG 2.2 A and AA checks and its best practices on every page, at a laptop's width and a phone's, light and dark", { timeout: 120_000 }, async () => {
		const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
		const { agent: done, job: completed } = await completedJob(`dash-axe-${run}`);
		await call("PUT", `/v1/agents/${done}/notepad/watermark`, tokens.operate, { value: "2026-11-30" });
		const failing = await createAgent(`dash-axe-fail-${run}`, {});
		await script({ error: 400, message: "bad request from the model" });
		const failed = await trigger(failing, "Fail.");
		expect(await settled(failed.id)).toBe("failed");
		const { job: waiting } = await awaitingApproval(`dash-axe-approval-${run}`, { text: "Filed." });
		const pages: [string, string | null, ((page: Page) => Promise<unknown>)?][] = [
			["/", null],
			["/", tokens.admin, (page) => fleetShown(page)],
			["/jobs", tokens.operate, (page) => page.locator("#jobs-table tbody tr").first().waitFor(LIVE)],
			["/jobs?status=failed", tokens.operate, (page) => page.locator("#jobs-table tbody tr").first().waitFor(LIVE)],
			[`/jobs?agent=${done}&status=cancelled`, tokens.operate, (page) => page.locator("#jobs-empty").waitFor(LIVE)],
			[`/jobs/${completed.id}`, tokens.operate, (page) => page.locator("#log-state", { hasText: "ended" }).waitFor(LIVE)],
			[`/jobs/${failed.id}`, tokens.operate, (page) => page.locator("#log-state", { hasText: "ended" }).waitFor(LIVE)],
			[`/jobs/${waiting.id}`, tokens.operate, (page) => page.locator("#approval-approve").waitFor(LIVE)],
			[`/jobs/${waiting.id}`, tokens.read, (page) => page.locator("#approval-input-text").waitFor(LIVE)],
			["/jobs/job-2026-01-01-zzzzzz", tokens.operate, (page) => page.locator("#notice").waitFor(LIVE)],
			[`/agents/${done}/runs`, tokens.admin, async (page) => {
				await page.locator("#agent-definition summary").click();
				await page.locator("#agent-notepad summary").click();
				await page.locator("#agent-definition-body pre").waitFor(LIVE);
				await page.locator("#notepad-key").waitFor(LIVE);
			}],
			[`/agents/${done}/logs`, tokens.operate, (page) => page.locator("#agent-logs section").first().waitFor(LIVE)],
			["/usage", tokens.operate, (page) => page.locator("#usage-table tbody tr").first().waitFor(LIVE)],
			["/incidents", tokens.operate, (page) => page.locator("#incidents-table tbody tr").first().waitFor(LIVE)],
			["/no/such/page", null],
		];
		const found: string[] = [];
		try {
			for (const [pathname, token, ready] of pages) {
				const page = token ? await signedIn(pathname, token) : await open(pathname);
				if (token) await viewReady(page);
				await ready?.(page);
				await page.evaluate(axeSource);
				// Each width and scheme on the page as drawn: the layout and the colours follow at once.
				for (const [width, height] of [[1280, 800], [390, 844]] as const) {
					for (const colorScheme of ["light", "dark"] as const) {
						await page.setViewportSize({ width, height });
						await page.emulateMedia({ colorScheme });
						// A log's lines off the screen are not laid out (content-visibility), and axe reads one
						// that overflows its box there as light text on the page: each line is laid out for it.
						await page.evaluate(`document.querySelectorAll("ol.log li").forEach((li) => { li.style.contentVisibility = "visible"; })`);
						// A box found to scroll is put in the tab order a frame later (dom.client.js).
						await page.evaluate("new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))");
						// Its best practices too: one main landmark, everything in a landmark, one h1, headings in
						// order, a skip link with a target (the WCAG tags alone checked none of them). No rule is off,
						// and every violation fails, not only the serious and critical ones.
						const violations = await page.evaluate<{ id: string; nodes: { target: string[] }[] }[]>(
							`axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"] }, resultTypes: ["violations"] }).then((r) => r.violations)`,
						);
						for (const v of violations) found.push(`${pathname} (${token ? "signed in" : "signed out"}, ${width}px, ${colorScheme}): ${v.id} at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
					}
				}
				await page.close();
			}
		} finally {
			// Its model answer is queued on the emulator until it is decided.
			await call("POST", `/v1/jobs/${waiting.id}/approval`, tokens.operate, { decision: "deny" });
			expect(await settled(waiting.id)).toBe("completed");
		}
		expect(found).toEqual([]);
		expect(pageErrors).toEqual([]);
	});

	it("says a job's change of status while its page is open, politely, and not the status it opened with", async () => {
		const agent = await createAgent(`dash-status-said-${run}`, {});
		expect(await emulatorQueued()).toBe(0);
		await script({ delay_ms: 3000, then: { text: "A later answer." } });
		const job = await trigger(agent);
		await expect.poll(async () => (await getJob(job.id)).status, LIVE).toBe("running");
		const page = await signedIn(`/jobs/${job.id}`, tokens.read);
		await page.locator("#job-status .badge", { hasText: "running" }).waitFor(LIVE);
		const said = page.locator("#job-status-said");
		expect(await said.getAttribute("aria-live")).toBe("polite");
		expect(await said.textContent()).toBe("");
		// Its end: the log's state says only "ended", the heading's badge changes in silence.
		await page.locator("#log-state", { hasText: "ended" }).waitFor(LIVE);
		await expect.poll(() => said.textContent(), LIVE).toBe("Job completed.");
		await page.close();
	});

	it("draws each run class in the timeline with its own shape, the legend's, not by colour alone", async () => {
		const agent = `dash-shapes-${run}`;
		const at = (i: number) => new Date(Date.UTC(2020, 0, 1, 0, i * 15)).toISOString();
		const kinds: [string, string, string][] = [["on-time", "on_time", "completed"], ["late", "late", "completed"], ["catch-up", "catch_up", "completed"], ["manual", "manual", "completed"], ["skipped", "on_time", "skipped"], ["unknown", "on_time", "unknown"], ["failed", "on_time", "failed"]];
		const runs = kinds.map(([, dispatch, status], i) => ({
			id: `occ-${i}`, schedule: "every-15m", source: "cron", scheduled_instant: at(10 - i), dispatch, claimed_at: at(10 - i), status,
			skip_reason: status === "skipped" ? "paused" : null, skipped_count: null, skipped_from: null, job_id: null, error: null, delivery_outcome: null,
		}));
		const page = await context.newPage();
		await page.route((u) => u.pathname === `/v1/agents/${agent}/runs`, (route) => route.fulfill({ json: { runs, next_cursor: null } }));
		await page.route((u) => u.pathname === `/v1/agents/${agent}/sessions/current`, (route) => route.fulfill({ status: 404, json: { error: { code: "not_found", message: "no agent" } } }));
		await signInOn(page, `/agents/${agent}/runs`, tokens.read);
		await page.locator("#runs-chart g.occurrence").nth(kinds.length - 1).waitFor(LIVE);
		/** A mark's shape: its element and geometry, without where it is. */
		const shapeOf = (sel: string) => page.locator(sel).first().evaluate((el) => [el.tagName, el.getAttribute("d"), el.getAttribute("r"), el.getAttribute("width")].join(" "));
		const shapes = new Map<string, string>();
		for (const [cls] of kinds) {
			const drawn = await shapeOf(`#runs-chart g.occurrence[data-class="${cls}"] .mark`);
			expect(await shapeOf(`.legend .mark.run-${cls}`), `${cls}: the legend's shape is the chart's`).toBe(drawn);
			shapes.set(cls, drawn);
		}
		expect(new Set(shapes.values()).size, "every class its own shape").toBe(kinds.length);
		// Painted as the chart's too: a legend mark drawn in the panel's colour on the panel is not seen.
		const [panel] = await styleOf(page, "section.panel:has(.legend)", ["background-color"]);
		for (const [cls] of kinds) {
			const drawn = await styleOf(page, `#runs-chart g.occurrence[data-class="${cls}"] .mark`, ["fill", "stroke", "stroke-width"]);
			expect(await styleOf(page, `.legend .mark.run-${cls}`, ["fill", "stroke", "stroke-width"]), `${cls}: the legend paints it as the chart does`).toEqual(drawn);
		}
		for (const cls of ["skipped", "unknown"]) {
			const [stroke] = await styleOf(page, `.legend .mark.run-${cls}`, ["stroke"]);
			expect(stroke, `${cls}: the legend's ring is not the panel's colour`).not.toBe(panel);
		}
		await page.locator("#runs-chart").screenshot({ path: path.join(SHOTS, "runs-shapes.png") });
		await page.close();
	});

	it("shows the fleet's and incidents' times as the exact time with its zone, beside the relative one, as the jobs list does", async () => {
		const { agents: [real] } = await call<{ agents: FakeAgent[] }>("GET", "/v1/agents?limit=1", tokens.read);
		// Well in the past: 09:00:00 in Los Angeles, 10:00:00, 11:00:00…
		const at = (hour: number) => new Date(Date.UTC(2020, 0, 15, 17 + hour)).toISOString();
		const agent = {
			...real!, name: `dash-zone-${run}`, enabled: true, warnings: [], running_jobs: [], queued_jobs: 0,
			paused: { by: "operator", at: at(0), reason: "maintenance" },
			schedules: [{ name: "daily", kind: "cron", expression: "0 11 * * *", timezone: null, catch_up: false, enabled: true, next_run: at(2) }],
			last_job: { id: "job-2020-01-15-abcdef", status: "completed", exit_reason: "success", finished_at: at(1), delivery: null, tool_calls: null },
		};
		const incident = {
			id: "inc-zone", agent: agent.name, signature: "x", class: "timeout", state: "resolved", error: "timed out", count: 3,
			first_seen_at: at(0), last_seen_at: at(1), last_job_id: null, alerted_at: at(0), resolved_at: at(2), closed_at: null, closed_by: null, failing: null,
		};
		const zoned = await browser.newContext({ viewport: { width: 1280, height: 800 }, timezoneId: "America/Los_Angeles" });
		const page = await zoned.newPage();
		await page.route((u) => u.pathname === "/v1/agents", (route) => route.fulfill({ json: { agents: [agent], next_cursor: null } }));
		await page.route((u) => u.pathname === "/v1/incidents", (route) => route.fulfill({ json: { incidents: [incident], next_cursor: null } }));
		await signInOn(page, "/", tokens.read);
		const exact = (hh: string) => new RegExp(`15 Jan(uary)?( 2020)?, ${hh}:00:00 (GMT-8|PST)`);
		const row = page.locator(`#fleet-table tr[data-agent="${agent.name}"]`);
		await row.waitFor(LIVE);
		const cell = (n: number) => row.locator(`td:nth-child(${n})`).textContent();
		expect(await cell(2), "paused since").toMatch(exact("09"));
		expect(await cell(3), "next run").toMatch(exact("11"));
		expect(await cell(5), "last run ended").toMatch(exact("10"));
		for (const n of [2, 5]) expect(await cell(n)).toMatch(/years ago/);
		// The agent is paused: its next slot is said as skipped, without a relative time of a run to come.
		expect(await cell(3), "next run").toMatch(/— skipped while paused$/);
		await page.goto(`${url}/incidents`);
		const inc = page.locator('#incidents-table tr[data-incident="inc-zone"]');
		await inc.waitFor(LIVE);
		const seen = await inc.locator("td:nth-child(7)").textContent();
		expect(seen, "last seen").toMatch(exact("10"));
		expect(seen, "opened (first seen)").toMatch(new RegExp(`first.*${exact("09").source}`));
		expect(await inc.locator("td:nth-child(4)").textContent(), "resolved").toMatch(new RegExp(`resolved.*${exact("11").source}`));
		await zoned.close();
	});

	it("clamps a long job summary in the jobs list to two lines, the whole of it in the cell's title, so the row stays small", async () => {
		const agent = await createAgent(`dash-clamp-${run}`, {});
		await script({ text: "Done." });
		const job = await trigger(agent, "Go.");
		expect(await settled(job.id)).toBe("completed");
		const long = Array.from({ length: 300 }, (_, i) => `word${i}`).join(" ");
		const page = await context.newPage();
		await page.route((u) => u.pathname === "/v1/jobs", async (route) => {
			const body = (await (await fetchWhole(route)).json()) as { jobs: { summary: string | null }[] };
			for (const j of body.jobs) j.summary = long;
			return route.fulfill({ json: body });
		});
		await signInOn(page, `/jobs?agent=${agent}`, tokens.read);
		const cell = page.locator(`#jobs-table tr[data-job="${job.id}"] td.summary`);
		await cell.waitFor(LIVE);
		expect(await cell.getAttribute("title")).toBe(long);
		// Two lines of it are seen, and no more: the row is no taller than that, and the table fits the page.
		const seen = await page.evaluate<{ lines: number; row: number; sideways: number; clamp: string }>(`(() => {
			const td = document.querySelector(${JSON.stringify(`#jobs-table tr[data-job="${job.id}"] td.summary`)});
			const text = [...td.querySelectorAll("*")].find((e) => e.textContent === td.textContent) || td;
			const style = getComputedStyle(text);
			const line = parseFloat(style.lineHeight) || parseFloat(style.fontSize) * 1.45;
			const wrap = td.closest(".table-wrap");
			return { lines: text.getBoundingClientRect().height / line, row: td.parentElement.getBoundingClientRect().height / line, sideways: wrap.scrollWidth - wrap.clientWidth, clamp: style.webkitLineClamp };
		})()`);
		expect(seen.lines).toBeGreaterThan(1.5);
		expect(seen.lines).toBeLessThan(2.5);
		expect(seen.row).toBeLessThan(4);
		expect(seen.sideways).toBeLessThanOrEqual(1);
		expect(seen.clamp).toBe("2");
		await page.close();
	});

	it("applies the jobs list's status filter and the incidents list's state once arrow-key stepping stops, not at each step, and a pick at once", async () => {
		// The incidents list applied each step at once: "open" and "detected" were asked for on the way to "alerted".
		const lists = [
			{ path: "/jobs", api: "/v1/jobs", select: "#jobs-filter select[name=status]", param: "status", steps: 3, stepped: "approval_pending", picked: "failed" },
			{ path: "/incidents", api: "/v1/incidents", select: "#incidents-filter select[name=state]", param: "state", steps: 3, stepped: "alerted", picked: "closed" },
		];
		for (const list of lists) {
			const page = await signedIn(list.path, tokens.read, { fakeClock: true });
			await viewReady(page);
			const asked: (string | null)[] = [];
			page.on("request", (r) => {
				const u = new URL(r.url());
				if (u.pathname === list.api) asked.push(u.searchParams.get(list.param));
			});
			const select = page.locator(list.select);
			await select.focus();
			for (let i = 0; i < list.steps; i++) await page.keyboard.press("ArrowDown");
			expect(await select.inputValue()).toBe(list.stepped);
			// A moment later the list is that one's, asked for once.
			await page.clock.runFor(1_000);
			await page.waitForURL(new RegExp(`${list.param}=${list.stepped}`), LIVE);
			await expect.poll(() => asked, LIVE).toEqual([list.stepped]);
			// A pick (the mouse's, or the keyboard's in the opened list) applies at once, with no time passing.
			await select.selectOption(list.picked);
			await expect.poll(() => asked, LIVE).toEqual([list.stepped, list.picked]);
			expect(page.url()).toMatch(new RegExp(`${list.param}=${list.picked}`));
			await page.close();
		}
	});

	it("applies the usage page's period as the jobs list's status: once arrow-key stepping stops, not at each step", async () => {
		const page = await signedIn("/usage", tokens.read, { fakeClock: true });
		await viewReady(page);
		await page.locator("#usage-meta", { hasNotText: "Loading" }).waitFor(LIVE);
		const since = new Set<string | null>();
		page.on("request", (r) => {
			const u = new URL(r.url());
			if (u.pathname === "/v1/usage") since.add(u.searchParams.get("since"));
		});
		const select = page.locator("#usage-days");
		await select.focus();
		for (let i = 0; i < 2; i++) await page.keyboard.press("ArrowDown");
		expect(await select.inputValue()).toBe("90");
		await page.clock.runFor(1_000);
		await page.waitForURL(/days=90/, LIVE);
		await page.locator("#usage-meta", { hasNotText: "Loading" }).waitFor(LIVE);
		// Only the 90 days' were read: the 30 days' step read its week of usage too before.
		const today = Math.floor(Date.now() / 86_400_000) * 86_400_000;
		expect([...since]).toEqual([new Date(today - 89 * 86_400_000).toISOString().slice(0, 10)]);
		await page.close();
	});

	it("filters the jobs list and cancels a job by keyboard alone, past the header by a skip link, Escape closing the dialog back onto Cancel", async () => {
		const agent = await createAgent(`dash-kbd-only-${run}`, {});
		expect(await emulatorQueued()).toBe(0);
		await script({ hang: true });
		const job = await trigger(agent, "Hold on.");
		await expect.poll(async () => (await getJob(job.id)).status, LIVE).toBe("running");
		const page = await signedIn("/jobs", tokens.operate);
		await viewReady(page);
		/** The control that has the focus: its tag, its name (a field's) or text, and its row. */
		const at = () => page.evaluate<{ tag: string; id: string; name: string; row: string | null }>(`(() => {
			const el = document.activeElement;
			const row = el && el.closest("[data-job]");
			return { tag: el.tagName, id: el.id, name: el.getAttribute("name") || el.textContent.trim(), row: row && row.dataset.job };
		})()`);
		/** Tabs until `wanted` has the focus, at most `most` times; how many it took. */
		const tabTo = async (wanted: (f: Awaited<ReturnType<typeof at>>) => boolean, most: number) => {
			for (let n = 1; n <= most; n++) {
				await page.keyboard.press("Tab");
				if (wanted(await at())) return n;
			}
			throw new Error(`not reached in ${most} Tabs; at ${JSON.stringify(await at())}`);
		};
		// Opened afresh, the tab's token kept: the focus starts at the document's start, the header's
		// brand, four sections and Sign out before the view. The skip link is the first stop.
		await page.goto(`${url}/jobs`);
		await viewReady(page);
		await page.keyboard.press("Tab");
		expect(await at()).toMatchObject({ tag: "A", name: "Skip to content" });
		await page.keyboard.press("Enter");
		await page.keyboard.press("Tab");
		expect(await at()).toMatchObject({ tag: "INPUT", name: "agent" });
		await page.keyboard.type(agent);
		await page.keyboard.press("Enter");
		await page.waitForURL(new RegExp(`agent=${agent}`), LIVE);
		await expect.poll(() => page.locator("#jobs-table tbody tr").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-job"))), LIVE).toEqual([job.id]);
		// Past the status, the trigger and the two times' parts, to the job's link.
		await tabTo((f) => f.tag === "A" && f.row === job.id, 30);
		await page.keyboard.press("Enter");
		await page.waitForURL(new RegExp(`/jobs/${job.id}$`), LIVE);
		await page.locator("#job-status .badge", { hasText: "running" }).waitFor(LIVE);
		await page.keyboard.press("Tab");
		expect(await at()).toMatchObject({ tag: "A", name: "Skip to content" });
		await page.keyboard.press("Enter");
		// Download, then Cancel (a running job has no Fork or Continue).
		expect(await tabTo((f) => f.id === "job-cancel", 5)).toBe(2);
		await page.keyboard.press("Enter");
		const dialog = page.getByRole("dialog", { name: `Cancel job ${job.id}` });
		await dialog.waitFor();
		// Escape: nothing is sent, the dialog goes, and the focus is back on Cancel.
		await page.keyboard.press("Escape");
		await dialog.waitFor({ state: "hidden" });
		await expect.poll(async () => (await at()).id, LIVE).toBe("job-cancel");
		expect((await getJob(job.id)).status).toBe("running");
		await page.keyboard.press("Enter");
		await dialog.waitFor();
		await page.keyboard.type("By keyboard.");
		await page.keyboard.press("Enter");
		await page.locator("#job-status .badge", { hasText: "cancelled" }).waitFor(LIVE);
		expect(await settled(job.id)).toBe("cancelled");
		await page.close();
	});

	it("counts the scheduler pill's warnings in words, not by its amber alone, and says a change of its state politely, once", async () => {
		let stalled = false;
		let behind = 0;
		// As the server gives them: each warning's text, and its kind (what the pill acts on) in the same place.
		let warnings = ["D1 holds 8.1 GB of the 10 GB a database may hold."];
		let kinds = ["d1_storage"];
		const page = await open("/jobs", { fakeClock: true });
		await page.route((u) => u.pathname === "/v1/status", async (route) => {
			const response = await fetchWhole(route);
			const body = (await response.json()) as { scheduler: Record<string, unknown>; warnings: string[]; warning_kinds: string[]; d1: unknown };
			const now = new Date().toISOString();
			body.scheduler = { ...body.scheduler, last_tick_at: now, last_ok_at: now, stalled, outcome: stalled ? "failed" : "ok", error: null, shards_behind: behind };
			body.warnings = warnings;
			body.warning_kinds = kinds;
			body.d1 = { ok: true, missing: [] };
			await route.fulfill({ response, json: body });
		});
		await signInOn(page, "/jobs", tokens.read);
		await viewReady(page);
		const pill = page.locator("#scheduler-pill");
		const said = page.locator("#scheduler-said");
		await pill.filter({ hasText: "1 warning" }).waitFor(LIVE);
		expect(await pill.getAttribute("class")).toBe("pill warn");
		expect(await pill.getAttribute("title")).toContain("D1 holds 8.1 GB");
		// The title reaches a mouse alone: the pill is a button opening the warnings in full, by keyboard
		// too, and Escape closes them with the focus still on it.
		const details = page.locator("#scheduler-details");
		expect(await details.isVisible()).toBe(false);
		await pill.focus();
		await page.keyboard.press("Enter");
		await details.waitFor(LIVE);
		// Named for a screen reader (an aria-label on a div of no role is not read out).
		expect(await page.getByRole("group", { name: "Scheduler" }).isVisible()).toBe(true);
		expect(await details.locator("li").allTextContents()).toEqual(["D1 holds 8.1 GB of the 10 GB a database may hold."]);
		expect(await details.locator("p").first().textContent()).toMatch(/^Scheduler · last tick \d/);
		await page.keyboard.press("Escape");
		await details.waitFor({ state: "hidden", ...LIVE });
		expect(await page.evaluate<string | undefined>("document.activeElement?.id")).toBe("scheduler-pill");
		// On a phone, where the bar wraps, they open under the pill and within the screen.
		await page.setViewportSize({ width: 375, height: 800 });
		await pill.click();
		await details.waitFor(LIVE);
		const [under, box] = [(await pill.boundingBox())!, (await details.boundingBox())!];
		expect(box.y).toBeGreaterThanOrEqual(under.y + under.height);
		expect(box.x).toBeGreaterThanOrEqual(0);
		expect(box.x + box.width).toBeLessThanOrEqual(375);
		await page.keyboard.press("Escape");
		await details.waitFor({ state: "hidden", ...LIVE });
		await page.setViewportSize({ width: 1280, height: 800 });
		// The state it was shown with is not said; the region is polite.
		expect(await said.getAttribute("aria-live")).toBe("polite");
		expect(await said.textContent()).toBe("");
		stalled = true;
		await stepClock(page, 10_000);
		await pill.filter({ hasText: "stalled" }).waitFor(LIVE);
		await expect.poll(() => said.textContent(), LIVE).toMatch(/^Scheduler: scheduler stalled · last good tick .* · 1 warning\.$/);
		// A shard behind is said as such, its warning not counted again; the others are.
		stalled = false;
		behind = 1;
		warnings = [backlogWarning({ shards_behind: 1, oldest_deferred_at: "2026-01-01T09:03:00.000Z", scheduled_time: "2026-01-01T09:07:00.000Z", deferred: 40 })!, warnings[0]!];
		kinds = ["scheduler_behind", "d1_storage"];
		await stepClock(page, 10_000);
		await expect.poll(() => pill.textContent(), LIVE).toMatch(/ · 1 shard behind · 1 warning$/);
		// Behind with no warning of it (the tick did not say since when): the other warning is still counted.
		warnings = [warnings[1]!];
		kinds = ["d1_storage"];
		await stepClock(page, 10_000);
		await expect.poll(() => pill.getAttribute("title"), LIVE).not.toContain("scheduler shard");
		expect(await pill.textContent()).toMatch(/ · 1 shard behind · 1 warning$/);
		behind = 0;
		warnings = [];
		kinds = [];
		await stepClock(page, 10_000);
		await expect.poll(() => pill.getAttribute("class"), LIVE).toBe("pill");
		await expect.poll(() => said.textContent(), LIVE).toMatch(/^Scheduler well again: last tick .*\.$/);
		await pill.click();
		await details.locator("p", { hasText: "Nothing to look at." }).waitFor(LIVE);
		expect(await details.locator("li").count()).toBe(0);
		// A poll's answer still being read as the page closes would be disposed under it.
		await page.unrouteAll({ behavior: "wait" });
		await page.close();
	});

	it("keeps the scheduler pill's open popover, and the text selected in it, across a poll that brings the same status, and redraws it when the status changed", async () => {
		// A status that holds still: the same tick, the same warning, at every poll until the test changes it.
		const tick = new Date(Date.now() - 20_000).toISOString();
		let warnings = ["D1 holds 8.1 GB of the 10 GB a database may hold."];
		let reads = 0;
		const page = await open("/jobs", { fakeClock: true });
		await page.route((u) => u.pathname === "/v1/status", async (route) => {
			const response = await fetchWhole(route);
			const body = (await response.json()) as { scheduler: Record<string, unknown>; warnings: string[]; warning_kinds: string[]; d1: unknown };
			body.scheduler = { ...body.scheduler, last_tick_at: tick, last_ok_at: tick, stalled: false, outcome: "ok", error: null, shards_behind: 0 };
			body.warnings = warnings;
			body.warning_kinds = warnings.map(() => "d1_storage");
			body.d1 = { ok: true, missing: [] };
			reads++;
			await route.fulfill({ response, json: body });
		});
		await signInOn(page, "/jobs", tokens.read);
		await viewReady(page);
		const pill = page.locator("#scheduler-pill");
		await pill.filter({ hasText: "1 warning" }).waitFor(LIVE);
		await pill.click();
		const details = page.locator("#scheduler-details");
		const item = details.locator("li");
		await item.waitFor(LIVE);
		// The warning selected, as a user copying it would, and its node marked to be told from a new one.
		await item.evaluate((li) => {
			(li as unknown as { kept: boolean }).kept = true;
			li.ownerDocument.defaultView!.getSelection()!.selectAllChildren(li);
		});
		const selected = () => page.evaluate<string>("getSelection().toString()");
		expect(await selected()).toBe(warnings[0]);
		// Polls come with the same status: the popover stays open, drawn as it was, the selection whole.
		for (let i = 0; i < 2; i++) {
			const read = reads;
			await stepClock(page, 10_000);
			await expect.poll(() => reads, LIVE).toBeGreaterThan(read);
			await page.locator('#view[data-poll="set"]').waitFor(LIVE);
		}
		expect(await details.isVisible()).toBe(true);
		expect(await item.evaluate((li) => (li as unknown as { kept?: boolean }).kept === true && li.isConnected)).toBe(true);
		expect(await selected()).toBe(warnings[0]);
		// A changed status is drawn: the open popover shows the new warning.
		warnings = ["D1 holds 9.2 GB of the 10 GB a database may hold."];
		await stepClock(page, 10_000);
		await expect.poll(() => item.allTextContents(), LIVE).toEqual(warnings);
		expect(await details.isVisible()).toBe(true);
		expect(await item.evaluate((li) => (li as unknown as { kept?: boolean }).kept === true)).toBe(false);
		await page.unrouteAll({ behavior: "wait" });
		await page.close();
	});

	it("counts the open incidents on the Incidents link on every view, read with the pill, and says them with the link's name", async () => {
		let incidents: { open: number; more: boolean } | null = { open: 3, more: false };
		let reads = 0;
		const page = await open("/jobs", { fakeClock: true });
		await page.route((u) => u.pathname === "/v1/status", async (route) => {
			reads++;
			const response = await fetchWhole(route);
			const body = (await response.json()) as Record<string, unknown>;
			await route.fulfill({ response, json: { ...body, incidents } });
		});
		await signInOn(page, "/jobs", tokens.read);
		await viewReady(page);
		const count = page.locator("#open-incidents");
		const nav = page.getByRole("navigation", { name: "Sections" });
		await count.filter({ hasText: /^3$/ }).waitFor(LIVE);
		expect(await nav.getByRole("link", { name: "Incidents (3 open)", exact: true }).getAttribute("href")).toBe("/incidents?state=open");
		incidents = { open: 20, more: true };
		await stepClock(page, 10_000);
		await count.filter({ hasText: /^20\+$/ }).waitFor(LIVE);
		expect(await nav.getByRole("link", { name: "Incidents (more than 20 open)", exact: true }).count()).toBe(1);
		// D1 could not say: the count stays as last read rather than reading as none.
		incidents = null;
		const before = reads;
		await stepClock(page, 10_000);
		await expect.poll(() => reads, LIVE).toBeGreaterThan(before);
		await page.locator('#view[data-poll="set"]').waitFor(LIVE);
		expect(await count.textContent()).toBe("20+");
		incidents = { open: 0, more: false };
		await stepClock(page, 10_000);
		await count.waitFor({ state: "hidden", ...LIVE });
		expect(await nav.getByRole("link", { name: "Incidents", exact: true }).getAttribute("href")).toBe("/incidents");
		await page.unrouteAll({ behavior: "wait" });
		await page.close();
	});

	it("draws the pages dark for a reader who asks for a dark scheme, every text at 4.5:1 and control edges at 3:1, forced colours still kept", async () => {
		// What axe-core's color-contrast rule checks, on each visible text: its colour over the backgrounds
		// beneath it (translucent ones laid over the next), 4.5:1, or 3:1 for large text.
		const audit = (page: Page) =>
			page.evaluate<{ dark: boolean; field: number; failures: string[] }>(`(() => {
				const rgba = (c) => { const m = c.match(/[\\d.]+/g).map(Number); return [m[0], m[1], m[2], m.length > 3 ? m[3] : 1]; };
				const lum = (c) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }; return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
				const over = (top, under) => [0, 1, 2].map((i) => top[i] * top[3] + under[i] * (1 - top[3]));
				const ratio = (a, b) => { const [hi, lo] = [lum(a), lum(b)].sort((p, q) => q - p); return (hi + 0.05) / (lo + 0.05); };
				const bgOf = (el) => {
					const layers = [];
					for (let e = el; e; e = e.parentElement) {
						const c = rgba(getComputedStyle(e).backgroundColor);
						if (c[3] > 0) layers.push(c);
						if (c[3] >= 1) break;
					}
					return layers.reduceRight((base, layer) => over(layer, base), [255, 255, 255]);
				};
				const failures = [];
				for (const el of document.querySelectorAll("body *")) {
					if (el.closest("svg, [hidden], .sr-only") || (el.matches(":disabled"))) continue;
					const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim()) || el.matches("input:not([type=checkbox]), select, textarea");
					if (!own) continue;
					const r = el.getBoundingClientRect();
					const s = getComputedStyle(el);
					if (r.width < 2 || r.height < 2 || s.visibility !== "visible") continue;
					const bg = bgOf(el);
					const fg = over(rgba(s.color), bg);
					const size = parseFloat(s.fontSize);
					const need = size >= 24 || (size >= 18.66 && Number(s.fontWeight) >= 700) ? 3 : 4.5;
					const got = ratio(fg, bg);
					if (got < need) failures.push(el.tagName.toLowerCase() + "." + [...el.classList].join(".") + " " + JSON.stringify(el.textContent.trim().slice(0, 30)) + ": " + got.toFixed(2));
					if (el.matches("input, select, textarea, button")) {
						const edge = ratio(over(rgba(s.borderTopColor), bg), bgOf(el.parentElement));
						if (edge < 3 && s.borderTopStyle !== "none") failures.push(el.tagName.toLowerCase() + "." + [...el.classList].join(".") + " edge: " + edge.toFixed(2));
					}
				}
				const body = getComputedStyle(document.body);
				const field = document.querySelector("input, select");
				return { dark: lum(bgOf(document.body)) < 0.05 && lum(rgba(body.color)) > 0.5, field: field ? lum(bgOf(field)) : 0, failures };
			})()`);
		const agent = await createAgent(`dash-dark-${run}`, {});
		await script({ text: "Done." });
		const job = await trigger(agent, "Go.");
		expect(await settled(job.id)).toBe("completed");
		await call("POST", `/v1/agents/${agent}/pause`, tokens.operate, { reason: "for the dark test" });
		const page = await context.newPage();
		await page.emulateMedia({ colorScheme: "dark" });
		await signInOn(page, "/", tokens.operate);
		const views: [string, string][] = [
			["/", `#fleet-table tr[data-agent="${agent}"]`],
			["/jobs", `#jobs-table tr[data-job="${job.id}"]`],
			[`/jobs/${job.id}`, "#job-status .badge"],
			["/incidents", "#incidents-meta"],
		];
		for (const [at, ready] of views) {
			if (at !== "/") await page.goto(`${url}${at}`);
			await page.locator(ready).first().waitFor(LIVE);
			const seen = await audit(page);
			expect(seen.dark, `${at} is drawn dark`).toBe(true);
			expect(seen.field, `${at}: its fields are dark too`).toBeLessThan(0.1);
			expect(seen.failures, `${at}: text and control edges below AA`).toEqual([]);
			if (at === "/") await shot(page, "fleet-dark");
		}
		// Printed, the page is light whatever the screen's scheme: paper keeps no background for light ink.
		await page.emulateMedia({ colorScheme: "dark", media: "print" });
		const printed = await audit(page);
		expect(printed.dark, "printed in the dark scheme's colours").toBe(false);
		await page.emulateMedia({ colorScheme: "dark", media: "screen" });
		// Forced colours win over the dark scheme: the legend's swatches and the current section's mark stay.
		await page.goto(`${url}/jobs`);
		await page.locator("#jobs-meta", { hasText: /jobs?|shown/ }).waitFor(LIVE);
		await page.evaluate(`document.querySelector("#view").insertAdjacentHTML("beforeend", '<ul class="legend"><li><span id="probe-swatch" class="swatch run-failed"></span>failed</li></ul>')`);
		await page.emulateMedia({ colorScheme: "dark", forcedColors: "active" });
		expect((await styleOf(page, "#probe-swatch", ["background-color"]))[0]).toBe("rgb(224, 49, 49)");
		expect((await styleOf(page, '.topbar nav a[aria-current="page"]', ["text-decoration-line"]))[0]).toContain("underline");
		await page.close();
		await call("POST", `/v1/agents/${agent}/resume`, tokens.operate, {});
	});

	/**
	 * The jobs list's reads of /v1/jobs (not the one-row probe): answered from the server, with an "Older"
	 * page that is empty, or refused as an unreachable server would be while `down` is set.
	 */
	async function jobsThatGoDown(page: Page) {
		const state = { down: false, reads: 0 };
		await page.route((u) => u.pathname === "/v1/jobs", async (route) => {
			const u = new URL(route.request().url());
			if (u.searchParams.get("limit") === "1") return route.continue();
			state.reads++;
			if (state.down) return route.abort("connectionrefused");
			if (u.searchParams.get("cursor")) return route.fulfill({ json: { jobs: [], next_cursor: null } });
			const body = (await (await fetchWhole(route)).json()) as { next_cursor: string | null };
			return route.fulfill({ json: { ...body, next_cursor: body.next_cursor ?? "c-fake" } });
		});
		return state;
	}
	/** The jobs page, signed in, its reads of /v1/jobs answered as jobsThatGoDown says, a page of them shown. */
	async function jobsPageThatGoesDown() {
		const page = await open("/jobs", { fakeClock: true });
		const jobs = await jobsThatGoDown(page);
		await signInOn(page, "/jobs", tokens.read);
		await page.locator("#jobs-older").waitFor(LIVE);
		await viewReady(page);
		return { page, jobs };
	}
	/** The server goes down and the next poll says so. */
	async function loseServerAtPoll(page: Page, jobs: { down: boolean }) {
		jobs.down = true;
		await stepClock(page, 10_000);
		await page.locator("#notice").filter({ hasText: "unreachable" }).waitFor(LIVE);
	}
	/** Two polls' reads: each poll is set once the last has ended, so the first's answer is drawn by then. */
	async function twoPolls(page: Page, jobs: { reads: number }) {
		const before = jobs.reads;
		await stepClock(page, 10_000);
		await expect.poll(() => jobs.reads, LIVE).toBe(before + 1);
		await stepClock(page, 10_000);
		await expect.poll(() => jobs.reads, LIVE).toBe(before + 2);
	}
	const noticeText = async (page: Page) => ((await page.locator("#notice").isVisible()) ? ((await page.locator("#notice").textContent()) ?? "") : "");

	it("says Reconnected only once a poll reaches the server, after a filter failed on a paged list, and the list comes back then", async () => {
		const { page, jobs } = await jobsPageThatGoesDown();
		await page.locator("#jobs-older").click();
		await page.locator("#jobs-older").waitFor({ state: "hidden", ...LIVE });
		jobs.down = true;
		await page.locator("#jobs-filter select[name=status]").selectOption("failed");
		await page.locator("#notice").filter({ hasText: "unreachable" }).waitFor(LIVE);
		await twoPolls(page, jobs);
		// Still down: the page must not say its data is current (it said so, over an empty list, when a
		// failed filter left the list "paged" and its polls skipped the server).
		expect(await noticeText(page)).toContain("unreachable");
		jobs.down = false;
		await stepClock(page, 10_000);
		await expect.poll(() => noticeText(page), LIVE).toContain("Reconnected");
		await expect.poll(() => page.locator("#jobs-meta").textContent(), LIVE).toMatch(/\S/);
		await page.close();
	});

	it("does not say Reconnected after signing out while the server was unreachable and in again", async () => {
		const { page, jobs } = await jobsPageThatGoesDown();
		await loseServerAtPoll(page, jobs);
		await page.locator("#sign-out").click();
		await page.locator("#token").waitFor(LIVE);
		jobs.down = false;
		await page.locator("#token").fill(tokens.read);
		await page.locator("#signin-form button[type=submit]").click();
		// The earlier session's list is still drawn (its Older too) until the new one's first load is.
		await viewReady(page);
		await page.locator("#jobs-older").waitFor(LIVE);
		await twoPolls(page, jobs);
		// The new session never lost the server: nothing to say of it.
		expect(await noticeText(page)).not.toContain("Reconnected");
		await page.close();
	});

	it("takes the unreachable alert away once a poll reaches the server, though an action had failed the same way meanwhile", async () => {
		const { page, jobs } = await jobsPageThatGoesDown();
		await loseServerAtPoll(page, jobs);
		const before = jobs.reads;
		// Older fails too, with the same message: the page's alert is now the action's.
		await page.locator("#jobs-older").click();
		await expect.poll(() => jobs.reads, LIVE).toBe(before + 1);
		await expect.poll(() => page.locator("#jobs-older").isDisabled(), LIVE).toBe(false);
		jobs.down = false;
		await stepClock(page, 10_000);
		await expect.poll(() => noticeText(page), LIVE).toContain("Reconnected");
		expect(await noticeText(page)).not.toContain("unreachable");
		await page.close();
	});

	it("polls a fleet shown whole every 10 s again once it has shrunk to one page", async () => {
		const page = await open("/", { fakeClock: true });
		const { agents: [real] } = await call<{ agents: FakeAgent[] }>("GET", "/v1/agents?limit=1", tokens.read);
		let size = 300;
		const all = () => Array.from({ length: size }, (_, i) => ({ ...real!, name: `fleet-${String(i).padStart(4, "0")}`, enabled: true, schedules: [], running_jobs: [], queued_jobs: 0, last_job: null, paused: null }));
		await page.route((u) => u.pathname === "/v1/agents", (route) => {
			const u = new URL(route.request().url());
			const agents = all();
			const limit = Number(u.searchParams.get("limit") ?? 50);
			const cursor = u.searchParams.get("cursor");
			const from = cursor === null ? 0 : agents.filter((a) => a.name <= cursor).length;
			const slice = agents.slice(from, from + limit);
			return route.fulfill({ json: { agents: slice, next_cursor: from + limit < agents.length ? slice.at(-1)!.name : null } });
		});
		await signInOn(page, "/", tokens.read);
		const meta = page.locator("#fleet-meta");
		await meta.filter({ hasText: "100 of" }).waitFor(LIVE);
		await page.locator("#fleet-all").click();
		await meta.filter({ hasText: /^300 agents/ }).waitFor(LIVE);
		expect(await meta.textContent()).toMatch(/refreshed every 20 s$/);
		size = 50; // agents deleted
		await page.clock.runFor(10_000);
		await meta.filter({ hasText: /^50 agents/ }).waitFor(LIVE);
		expect(await meta.textContent()).not.toMatch(/refreshed every/);
		await page.close();
	});

	it("draws a right-to-left job summary in its own direction in the clamped cell", async () => {
		const page = await context.newPage();
		const summary = "שלום עולם!";
		const job = { id: "job-2020-01-15-abcdef", agent: "rtl", status: "completed", trigger_type: "manual", schedule: null, created_at: "2020-01-15T10:00:00Z", started_at: "2020-01-15T10:00:00Z", finished_at: "2020-01-15T10:00:05Z", duration_seconds: 5, summary, tool_calls: null, exit_reason: "success", delivery: null };
		await page.route((u) => u.pathname === "/v1/jobs", (route) => route.fulfill({ json: { jobs: [job], next_cursor: null } }));
		await signInOn(page, "/jobs", tokens.read);
		await page.locator("#jobs-table td.summary").first().waitFor(LIVE);
		const got = await page.evaluate<{ bang: number; first: number }>(`(() => {
			const td = document.querySelector("#jobs-table td.summary");
			const walker = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
			const t = walker.nextNode();
			const at = (i) => { const r = document.createRange(); r.setStart(t, i); r.setEnd(t, i + 1); return r.getBoundingClientRect().left; };
			return { bang: at(t.length - 1), first: at(0) };
		})()`);
		// Right to left: the paragraph's closing "!" is drawn left of its first letter.
		expect(got.bang).toBeLessThan(got.first);
		await page.close();
	});

});

describe("the dashboard, as a new user walking through it finds it", () => {
	it("says a paused agent's next slot is skipped while it is paused, not a run to come", async () => {
		const agent = await createAgent(`dash-held-${run}`, { schedules: { "every-15m": { interval: "15m", catch_up: false } } });
		await call("POST", `/v1/agents/${agent}/pause`, tokens.operate, { reason: "vendor outage" });
		const page = await signedIn("/", tokens.operate);
		const row = page.locator(`#fleet-table tr[data-agent="${agent}"]`);
		await row.locator(".badge", { hasText: "paused" }).waitFor(LIVE);
		const schedule = (await row.locator("td").nth(2).innerText()).replace(/\s+/g, " ");
		expect(schedule).toMatch(/next \d+ \w+, [\d:]+ \S+ — skipped while paused/);
		expect(schedule).not.toMatch(/\bin \d+ minutes?\b/);
		await page.close();
		expect(pageErrors).toEqual([]);
	});

	it("offers Run now greyed out for a paused or a disabled agent, saying why on it, and offers it again as soon as Resume is pressed, before any poll", async () => {
		const paused = await createAgent(`dash-norun-p-${run}`, {});
		await call("POST", `/v1/agents/${paused}/pause`, tokens.operate, {});
		const off = await createAgent(`dash-norun-d-${run}`, { enabled: false });
		const live = await createAgent(`dash-norun-a-${run}`, {});
		// A context of its own: its clock is held below, and a context's clock is every page's in it.
		const own = await browser.newContext({ viewport: { width: 1280, height: 800 } });
		const page = await own.newPage();
		page.on("pageerror", (err) => pageErrors.push(`norun: ${err.message}`));
		await page.clock.install();
		await signInOn(page, `/?prefix=dash-norun-`, tokens.operate);
		await viewReady(page);
		const runNow = (agent: string) => page.locator(`#fleet-table tr[data-agent="${agent}"]`).getByRole("button", { name: /^Run now/ });
		await runNow(live).waitFor(LIVE);
		await runNow(paused).waitFor(LIVE);
		await runNow(off).waitFor(LIVE);
		expect(await runNow(live).getAttribute("aria-disabled")).toBe(null);
		expect(await runNow(paused).getAttribute("aria-disabled")).toBe("true");
		expect(await runNow(paused).getAttribute("title")).toBe(`${paused} is paused: resume it to run it`);
		expect(await runNow(off).getAttribute("aria-disabled")).toBe("true");
		expect(await runNow(off).getAttribute("title")).toContain(`${off} is disabled`);
		// No poll from here on (the fleet's comes every 10 s): only Resume's own reload can redraw the row.
		await page.clock.pauseAt(Date.now() + 1000);
		await page.locator(`#fleet-table tr[data-agent="${paused}"]`).getByRole("button", { name: `Resume ${paused}` }).click();
		await expect.poll(() => runNow(paused).getAttribute("aria-disabled"), LIVE).toBe(null);
		await own.close();
		expect(pageErrors).toEqual([]);
	});

	it("lets the keyboard reach a greyed-out Run now, which says why it cannot run, shows why when pressed, and keeps the focus when a poll greys it", async () => {
		const paused = await createAgent(`dash-greyrun-p-${run}`, {});
		await call("POST", `/v1/agents/${paused}/pause`, tokens.operate, {});
		const live = await createAgent(`dash-greyrun-q-${run}`, {});
		const page = await signedIn(`/?prefix=dash-greyrun-`, tokens.operate, { fakeClock: true });
		const row = (agent: string) => page.locator(`#fleet-table tr[data-agent="${agent}"]`);
		const runNow = (agent: string) => row(agent).getByRole("button", { name: /^Run now/ });
		const focused = () => page.evaluate<string | null>(`document.activeElement && document.activeElement.getAttribute("aria-label")`);
		await runNow(paused).waitFor(LIVE);
		await page.locator('body[data-role="operate"]').waitFor({ ...LIVE, state: "attached" });
		// From the row's last link, Tab goes to Run now (a disabled button it would skip).
		await row(paused).getByRole("link", { name: `Logs of ${paused}` }).focus();
		await page.keyboard.press("Tab");
		expect(await focused()).toBe(`Run now: ${paused}`);
		expect(await runNow(paused).getAttribute("aria-disabled")).toBe("true");
		expect(await accessibleDescription(page, `#fleet-table tr[data-agent="${paused}"] button[aria-label="Run now: ${paused}"]`)).toBe(`${paused} is paused: resume it to run it`);
		// Pressed, it runs nothing: no dialog, the reason said in its row.
		await page.keyboard.press("Enter");
		await row(paused).getByRole("status").filter({ hasText: `${paused} is paused: resume it to run it` }).waitFor(LIVE);
		expect(await page.getByRole("dialog").count()).toBe(0);
		expect(await focused()).toBe(`Run now: ${paused}`);
		// Focused on a runnable agent's Run now, paused meanwhile: the poll greys it, the focus stays on it.
		await runNow(live).focus();
		await call("POST", `/v1/agents/${live}/pause`, tokens.operate, {});
		await stepClock(page, 10_000);
		await expect.poll(() => runNow(live).getAttribute("aria-disabled"), LIVE).toBe("true");
		expect(await focused()).toBe(`Run now: ${live}`);
		await page.close();
		expect(pageErrors).toEqual([]);
	});

	it("says again why a greyed-out Run now cannot run when it is pressed again, and keeps saying it in its row across a poll's redraw while the agent is still paused, not once it is resumed", async () => {
		const agent = await createAgent(`dash-sayagain-${run}`, {});
		await call("POST", `/v1/agents/${agent}/pause`, tokens.operate, {});
		const page = await signedIn(`/?prefix=dash-sayagain-`, tokens.operate, { fakeClock: true });
		const row = page.locator(`#fleet-table tr[data-agent="${agent}"]`);
		const runNow = row.getByRole("button", { name: /^Run now/ });
		const status = row.getByRole("status");
		const why = `${agent} is paused: resume it to run it`;
		await runNow.waitFor(LIVE);
		await page.locator('body[data-role="operate"]').waitFor({ ...LIVE, state: "attached" });
		// What the row's status says after each change to the table (each a change a screen reader is told of), repeats left out.
		await page.evaluate(`(() => {
			window.said = [];
			const sel = ${JSON.stringify(`#fleet-table tr[data-agent="${agent}"] [role=status]`)};
			new MutationObserver(() => {
				const s = document.querySelector(sel);
				const text = s ? s.textContent : null;
				if (window.said[window.said.length - 1] !== text) window.said.push(text);
			}).observe(document.querySelector("#fleet-table tbody"), { subtree: true, childList: true, characterData: true });
		})()`);
		const said = () => page.evaluate<(string | null)[]>(`window.said.splice(0)`);
		await runNow.focus();
		await page.keyboard.press("Enter");
		await status.filter({ hasText: why }).waitFor(LIVE);
		expect(await said()).toEqual([why]);
		// Pressed again (clicked: Playwright waits for an aria-disabled button to be enabled unless forced), the same
		// reason: emptied, then said again a moment later, which a screen reader reads out again.
		await runNow.click({ force: true });
		await page.clock.runFor(1000);
		await status.filter({ hasText: why }).waitFor(LIVE);
		expect(await said()).toEqual(["", why]);
		// A new pause reason: a poll redraws the row, still paused, and the reason Run now was pressed for is still said.
		await call("POST", `/v1/agents/${agent}/pause`, tokens.operate, { reason: "held for the vendor" });
		await stepClock(page, 10_000);
		await row.locator(".reason", { hasText: "held for the vendor" }).waitFor(LIVE);
		expect(await status.textContent()).toBe(why);
		// Resumed, it no longer holds: gone, and not said again when paused again until Run now is pressed.
		await call("POST", `/v1/agents/${agent}/resume`, tokens.operate, {});
		await stepClock(page, 10_000);
		await expect.poll(() => runNow.getAttribute("aria-disabled"), LIVE).toBe(null);
		expect(await status.count()).toBe(0);
		await call("POST", `/v1/agents/${agent}/pause`, tokens.operate, {});
		await stepClock(page, 10_000);
		await expect.poll(() => runNow.getAttribute("aria-disabled"), LIVE).toBe("true");
		expect(await status.textContent()).toBe("");
		await page.close();
		expect(pageErrors).toEqual([]);
	});

	it("says a schedule's next run in the new-agent editor's Check result with its relative time apart from its zone", async () => {
		const page = await signedIn("/", tokens.admin);
		await page.getByRole("button", { name: "New agent" }).click();
		await page.getByLabel("New agent (YAML)").fill(`name: dash-check-${run}\nprompt: Watch db-9.\nschedules:\n  nightly: { cron: "0 3 * * *", timezone: UTC }\n`);
		await page.getByRole("button", { name: "Check", exact: true }).click();
		const next = page.locator("#new-agent [role=status] li").first();
		await next.waitFor(LIVE);
		// Not "03:00:00 UTCin 7 hours": the zone and the relative time read apart.
		expect(await next.innerText()).toMatch(/ 03:00:00 UTC\s+(in \d+ \w+|tomorrow)$/);
		await page.close();
		expect(pageErrors).toEqual([]);
	});

	it("lists a refused definition's problems in the text's order, by line then column, and words one problem as one", async () => {
		const page = await context.newPage();
		const issues = [
			{ path: "timeout", message: "bad duration", line: 6, column: 10 },
			{ path: "schedules.hourly.cron", message: "bad cron", line: 5, column: 11 },
			{ path: "schedules.hourly.timezone", message: "bad zone", line: 5, column: 3 },
			{ path: "max_turns", message: "not a number", line: 7, column: 12 },
		];
		let answer = issues;
		await page.route((u) => u.pathname === "/v1/agents", (route) => route.request().method() !== "POST" ? route.fallback()
			: route.fulfill({ status: 400, json: { error: { code: "invalid_request", message: "invalid definition", details: { issues: answer } } } }));
		await signInOn(page, "/", tokens.admin);
		await page.getByRole("button", { name: "New agent" }).click();
		await page.getByRole("button", { name: "Create", exact: true }).click();
		const alert = page.locator("#new-agent [role=alert]");
		await alert.locator("li").first().waitFor(LIVE);
		expect(await alert.locator("p").textContent()).toBe("Not saved: 4 problems in it, each at its place:");
		expect((await alert.locator("li").allTextContents()).map((t) => t.split(":")[0])).toEqual(["Line 5, column 3", "Line 5, column 11", "Line 6, column 10", "Line 7, column 12"]);
		answer = [issues[0]!];
		await page.getByRole("button", { name: "Create", exact: true }).click();
		await alert.locator("p", { hasText: "one problem" }).waitFor(LIVE);
		expect(await alert.locator("p").textContent()).toBe("Not saved: one problem in it, at its place:");
		await page.close();
		expect(pageErrors).toEqual([]);
	});

	it("says in the top bar which token is signed in and its role, and a read token why it has no actions", async () => {
		const me = await call<{ name: string; role: string }>("GET", "/v1/me", tokens.read);
		const reader = await signedIn("/", tokens.read);
		const who = reader.locator("#whoami");
		await who.filter({ hasText: /·/ }).waitFor(LIVE);
		expect(await who.innerText()).toBe(`${me.name} · read`);
		expect(await reader.getByText("Read-only token: actions need operate or admin.").isVisible()).toBe(true);
		await reader.getByRole("button", { name: "Sign out" }).click();
		await reader.locator("#signin").waitFor(LIVE);
		expect(await who.isVisible()).toBe(false);
		await reader.close();
		const operator = await signedIn("/", tokens.operate);
		await operator.locator('body[data-role="operate"]').waitFor({ ...LIVE, state: "attached" });
		expect(await operator.locator("#whoami").innerText()).toMatch(/ · operate$/);
		expect(await operator.getByText("Read-only token: actions need operate or admin.").isVisible()).toBe(false);
		await operator.close();
		expect(pageErrors).toEqual([]);
	});

	it("names the token signed in now, not the one signed out before /v1/me answered it, and offers a read token no action", async () => {
		const operateMe = await call<{ name: string; role: string }>("GET", "/v1/me", tokens.operate);
		const readMe = await call<{ name: string; role: string }>("GET", "/v1/me", tokens.read);
		const page = await open("/");
		// The first session's /v1/me is held until the second session is signed in; later ones are answered.
		let held: Route | null = null;
		let heldRequest: Request | null = null;
		await page.route("**/v1/me", (route) => {
			if (heldRequest) return route.continue();
			heldRequest = route.request();
			held = route;
		});
		const fate = new Promise<string>((resolve) => {
			page.on("requestfinished", (r) => r === heldRequest && resolve("answered"));
			page.on("requestfailed", (r) => r === heldRequest && resolve("dropped"));
		});
		await signInOn(page, "/", tokens.operate);
		await expect.poll(() => held !== null, LIVE).toBe(true);
		await page.getByRole("button", { name: "Sign out" }).click();
		await page.locator("#token").fill(tokens.read);
		await page.locator("#signin-form button[type=submit]").click();
		const who = page.locator("#whoami");
		await who.filter({ hasText: "· read" }).waitFor(LIVE);
		// The first session's answer comes now: it names the operate token.
		const answered = await (held as Route | null)!.fulfill({ json: operateMe }).then(() => true, () => false);
		// (A request the page dropped at sign-out can no longer be answered.)
		if (answered) await fate;
		// Whatever the page does with it is done by the time it answers a request of its own made after it.
		await page.evaluate(`fetch("/").then((r) => r.text())`);
		expect(await who.innerText()).toBe(`${readMe.name} · read`);
		expect(await page.evaluate<string | undefined>(`document.body.dataset.role`)).toBe("read");
		await page.locator("#fleet-table tbody tr").first().waitFor(LIVE);
		expect(await page.locator("#fleet-table").getByRole("button").count()).toBe(0);
		expect(await page.getByText("Read-only token: actions need operate or admin.").isVisible()).toBe(true);
		await page.close();
		expect(pageErrors).toEqual([]);
	});

	it("shows no section links while signed out, and says a wrong token was refused in a sentence", async () => {
		const page = await open("/jobs");
		await page.locator("#signin").waitFor({ state: "visible" });
		const nav = page.getByRole("navigation", { name: "Sections" });
		expect(await nav.isVisible()).toBe(false);
		await page.locator("#token").fill("not-a-real-token-0000000000");
		await page.locator("#signin-form button[type=submit]").click();
		const error = page.locator("#signin-error");
		await error.waitFor({ state: "visible", ...LIVE });
		expect(await error.innerText()).toBe("That token was refused: invalid token.");
		expect(await nav.isVisible()).toBe(false);
		await page.locator("#token").fill(tokens.read);
		await page.locator("#signin-form button[type=submit]").click();
		await nav.getByRole("link", { name: "Fleet" }).waitFor(LIVE);
		await page.getByRole("button", { name: "Sign out" }).click();
		await page.locator("#signin").waitFor({ state: "visible" });
		expect(await nav.isVisible()).toBe(false);
		await page.close();
		expect(pageErrors).toEqual([]);
	});

	it("says only the timeout of an ended job in what it runs with, not a deadline still to come", async () => {
		const { job } = await completedJob(`dash-deadline-${run}`);
		const page = await signedIn(`/jobs/${job.id}`, tokens.read);
		await page.locator("#job-status .badge", { hasText: "completed" }).waitFor(LIVE);
		await page.getByText("What it runs with").click();
		const body = page.locator("#job-manifest-body");
		await body.locator("pre").waitFor(LIVE);
		expect(await body.locator("dd").nth(2).innerText()).toBe("5m");
		await page.close();
		// A job still under way (waiting for an approval) says when its deadline comes.
		const { job: waiting } = await awaitingApproval(`dash-deadline-w-${run}`, { text: "Not filed." });
		const live = await signedIn(`/jobs/${waiting.id}`, tokens.read);
		await live.locator("#job-status .badge", { hasText: "approval pending" }).waitFor(LIVE);
		await live.getByText("What it runs with").click();
		await live.locator("#job-manifest-body pre").waitFor(LIVE);
		expect(await live.locator("#job-manifest-body dd").nth(2).innerText()).toMatch(/^5m, deadline in [45] minutes$/);
		await live.close();
		// Denied, the model's queued answer is taken.
		await call("POST", `/v1/jobs/${waiting.id}/approval`, tokens.operate, { decision: "deny" });
		expect(await settled(waiting.id)).toBe("completed");
		expect(await emulatorQueued()).toBe(0);
		expect(pageErrors).toEqual([]);
	});

	it("keeps a model's name whole in a fleet row on a phone, not broken at its dashes", async () => {
		const page = await signedIn("/", tokens.read);
		await page.setViewportSize({ width: 390, height: 800 });
		const cell = page.locator('#fleet-table tr[data-agent="daily-digest"] td').first();
		await cell.getByText(/claude-/).waitFor(LIVE);
		const { model } = await call<{ model: string }>("GET", "/v1/agents/daily-digest", tokens.read);
		// The lines the model's name is drawn on: the rows of its characters' boxes. (A string: no DOM types here.)
		const lines = await cell.evaluate((td, name) => new Function("td", "name", `
			const walk = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
			for (let t = walk.nextNode(); t; t = walk.nextNode()) {
				const at = t.data.indexOf(name);
				if (at < 0) continue;
				const r = document.createRange();
				r.setStart(t, at);
				r.setEnd(t, at + name.length);
				return new Set([...r.getClientRects()].map((b) => Math.round(b.top))).size;
			}
			return 0;
		`)(td, name) as number, model);
		expect(lines).toBe(1);
		await page.close();
		expect(pageErrors).toEqual([]);
	});

	/** The fleet on a phone, its table wider than the screen: the page, daily-digest's row and the table's scrolling box. */
	const fleetOnPhone = async () => {
		const page = await signedIn("/", tokens.read);
		await page.setViewportSize({ width: 390, height: 800 });
		const row = page.locator('#fleet-table tr[data-agent="daily-digest"]');
		await row.waitFor(LIVE);
		const wrap = page.locator(".table-wrap:has(#fleet-table)");
		expect(await wrap.evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(true);
		return { page, row, wrap };
	};

	it("shades the edge of a table that scrolls sideways on a phone where more of it lies, and not at its end", async () => {
		const { page, row, wrap } = await fleetOnPhone();
		/** The brightest pixel of a 2-px strip inside the box's right edge, down daily-digest's row (text darkens some, a shade every one). */
		const edge = async () => {
			const box = (await wrap.boundingBox())!;
			const r = (await row.boundingBox())!;
			const png = await page.screenshot({ clip: { x: box.x + box.width - 4, y: r.y + 2, width: 2, height: r.height - 4 } });
			return Math.max(...rgbRows(png).flat());
		};
		// The panel is white (the light scheme): shaded, the edge's brightest pixel is darker.
		expect(await edge()).toBeLessThan(250);
		await wrap.evaluate((el) => { el.scrollLeft = el.scrollWidth; });
		expect(await edge()).toBe(255);
		await page.close();
		expect(pageErrors).toEqual([]);
	});

	it("shades the edge of a table that scrolls sideways in the dark scheme as visibly as in the light one", async () => {
		const { page, row, wrap } = await fleetOnPhone();
		const lum = (c: number[]) => {
			const [r, g, b] = c.map((v) => (v /= 255) <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
			return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
		};
		const ratio = (a: number[], b: number[]) => (Math.max(lum(a), lum(b)) + 0.05) / (Math.min(lum(a), lum(b)) + 0.05);
		/**
		 * How far the shade stands from the panel in a 2-px strip inside the box's right edge, down
		 * daily-digest's row: the contrast of the strip's pixel nearest the panel's colour (text makes
		 * others further), 1 where the strip is the panel's own colour; scrolled to its start or its end.
		 */
		const shade = async (end = false) => {
			await wrap.evaluate((el, end) => { el.scrollLeft = end ? el.scrollWidth : 0; }, end);
			const hex = (await page.evaluate<string>(`getComputedStyle(document.documentElement).getPropertyValue("--panel").trim()`)).slice(1);
			const panel = [0, 2, 4].map((i) => parseInt(hex.slice(i, i + 2), 16));
			const box = (await wrap.boundingBox())!;
			const r = (await row.boundingBox())!;
			const png = await page.screenshot({ clip: { x: box.x + box.width - 4, y: r.y + 2, width: 2, height: r.height - 4 } });
			const pixels = rgbRows(png).flatMap((line) => Array.from({ length: line.length / 3 }, (_, i) => line.slice(i * 3, i * 3 + 3)));
			return Math.min(...pixels.map((p) => ratio(p, panel)));
		};
		const light = await shade();
		expect(light).toBeGreaterThan(1.1);
		await page.emulateMedia({ colorScheme: "dark" });
		expect(await page.evaluate<string>(`getComputedStyle(document.body).backgroundColor`)).not.toBe("rgb(255, 255, 255)");
		expect(await shade()).toBeGreaterThanOrEqual(light);
		// Scrolled to its end, no shade there: the panel's own colour.
		expect(await shade(true)).toBe(1);
		await page.close();
		expect(pageErrors).toEqual([]);
	});

	it("keeps Sign out on one line on a phone's top bar beside who is signed in", async () => {
		const page = await signedIn("/usage", tokens.operate);
		await page.setViewportSize({ width: 375, height: 800 });
		await page.locator("#whoami").filter({ hasText: /· operate$/ }).waitFor(LIVE);
		await page.locator("#scheduler-pill:not([hidden])").waitFor(LIVE);
		// The lines its words are drawn on. (A string: no DOM types here.)
		const lines = await page.locator("#sign-out").evaluate((el) => new Function("el", `
			const r = document.createRange();
			r.selectNodeContents(el);
			return new Set([...r.getClientRects()].map((b) => Math.round(b.top))).size;
		`)(el) as number);
		expect(lines).toBe(1);
		await page.close();
		expect(pageErrors).toEqual([]);
	});
});

/** A PNG's pixels (8-bit, RGB or RGBA, not interlaced: a Chromium screenshot), each row's channels but alpha, unfiltered. */
function rgbRows(png: Buffer): number[][] {
	let at = 8;
	let width = 0, channels = 3;
	const data: Buffer[] = [];
	while (at < png.length) {
		const len = png.readUInt32BE(at);
		const type = png.toString("latin1", at + 4, at + 8);
		const body = png.subarray(at + 8, at + 8 + len);
		if (type === "IHDR") { width = body.readUInt32BE(0); channels = body[9] === 6 ? 4 : 3; }
		if (type === "IDAT") data.push(body);
		at += 12 + len;
	}
	const raw = inflateSync(Buffer.concat(data));
	const stride = width * channels;
	const rows: number[][] = [];
	let prev = new Array<number>(stride).fill(0);
	for (let y = 0; y * (stride + 1) < raw.length; y++) {
		const filter = raw[y * (stride + 1)]!;
		const line: number[] = [];
		for (let x = 0; x < stride; x++) {
			const v = raw[y * (stride + 1) + 1 + x]!;
			const a = x >= channels ? line[x - channels]! : 0, b = prev[x]!, c = x >= channels ? prev[x - channels]! : 0;
			const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
			const pred = [0, a, b, (a + b) >> 1, pa <= pb && pa <= pc ? a : pb <= pc ? b : c][filter]!;
			line.push((v + pred) & 255);
		}
		rows.push(line.filter((_, x) => channels === 3 || x % 4 !== 3));
		prev = line;
	}
	return rows;
}
