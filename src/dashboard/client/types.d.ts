// Types for the *.client.js files' JSDoc, global like the files' own names. Not shipped (index.ts
// joins only the scripts), so the bulky ones live here rather than in the scripts' comments.

// The API's JSON (see api-types.ts).
type AgentNamePage = import("./api-types.ts").AgentNamePage;
type AgentPage = import("./api-types.ts").AgentPage;
type AgentStatus = import("./api-types.ts").AgentStatus;
type AgentView = import("./api-types.ts").AgentView;
type DryRun = import("./api-types.ts").DryRun;
type CurrentSession = import("./api-types.ts").CurrentSession;
type JobManifest = import("./api-types.ts").JobManifest;
type Incident = import("./api-types.ts").Incident;
type IncidentPage = import("./api-types.ts").IncidentPage;
type JobPage = import("./api-types.ts").JobPage;
type JobRecord = import("./api-types.ts").JobRecord;
type JobView = import("./api-types.ts").JobView;
type JobSummary = import("./api-types.ts").JobSummary;
type Me = import("./api-types.ts").Me;
type ModelUsage = import("./api-types.ts").ModelUsage;
type Occurrence = import("./api-types.ts").Occurrence;
type OutputLine = import("./api-types.ts").OutputLine;
type Page<K extends string, T> = import("./api-types.ts").Page<K, T>;
type SseEvent = import("./api-types.ts").SseEvent;
type Status = import("./api-types.ts").Status;
type ToolCallPage = import("./api-types.ts").ToolCallPage;
type ToolCallView = import("./api-types.ts").ToolCallView;
type UsageAgentTotalPage = import("./api-types.ts").UsageAgentTotalPage;
type UsageDay = import("./api-types.ts").UsageDay;
type UsagePage = import("./api-types.ts").UsagePage;
type UsageTotalPage = import("./api-types.ts").UsageTotalPage;

// dom.client.js
/** What an element is built from: nodes as they are, anything else as text; null, undefined and false are left out. */
type Child = Node | string | number | boolean | null | undefined | Child[];
/**
 * Attributes by name: "text" is the text content, "on…" a listener, true an empty attribute; null,
 * undefined and false are left out. (onclick is typed: the only listener h() is given, on buttons.)
 */
type Attrs = (Record<string, unknown> & { onclick?: (e: Click) => unknown }) | null;
/** A click on a button, for a handler that disables it while its action runs (act()). */
type Click = MouseEvent & { currentTarget: HTMLButtonElement };

// api.client.js
/** `json` is sent as JSON; `body` as text of the media type `type` (an agent's definition as YAML). */
type RequestOptions = { method?: string; headers?: HeadersInit; json?: unknown; body?: string; type?: string; signal?: AbortSignal };

// dialog.client.js
/** What ask() says and does: its title, what the action does, and its field, if it has one. */
type AskOptions = {
	title: string;
	text: string;
	/** The text to give: a prompt or a reason. Without one, the dialog is a confirmation. */
	field?: AskField;
	/** The primary button's word ("Run", "Fork", "Pause"), which the field's submitting key does too. */
	submit: string;
	/** The primary button stands for what cannot be undone (cancel a job, deny a call): coloured so. */
	danger?: boolean;
	/** The other button's word: "Cancel" unless said (the Cancel job dialog's cannot be "Cancel"). */
	dismiss?: string;
	/** A checkbox for an option the action takes (cancel's force); run is told whether it was ticked. */
	check?: { label: string; hint: string };
	/** The action, given the field's text trimmed (empty without a field) and whether `check` was ticked; what it throws is said in the dialog, and false keeps the dialog open. */
	run: (text: string, dialog: AskControl, checked: boolean) => Promise<unknown>;
};
/** The dialog's text field: its label, and what an empty one means. */
type AskField = {
	label: string;
	hint: string;
	placeholder?: string;
	/** One line (a reason, submitted by Enter) rather than a multi-line prompt (Ctrl+Enter). */
	oneLine?: boolean;
	maxLength?: number;
};
/** The action's say in the dialog; each keeps it open (returns false, for the action to return). */
type AskControl = {
	/** Says what is wrong, and gives the field (or the primary button, without one) the focus back. */
	error: (message: string) => false;
	/** Asks a further question, which the primary button, relabelled, answers yes. */
	question: (message: string, submitLabel: string) => false;
};

// main.client.js: a page's view, started with the signal that ends it at sign-out.
type View = (signal: AbortSignal) => Promise<void>;

// job-output.client.js
/** readSse's callbacks: event answers "end" for the event that ends the stream. */
type SseHandlers = { event: (ev: SseEvent) => "end" | void; retry: (ms: number) => void };

// usage.client.js: one agent's day (or the day's other agents, summed), as the chart and table show it.
/** `costed`: how many of the rows summed have a cost (the API's cost_usd is not null). */
type Usage = { jobs: number; input: number; output: number; cacheWrite: number; cacheRead: number; cost: number; priced: number; costed: number };
type UsageCell = Usage & { day: number; agent: string };
type UsageTotalCell = Usage & { agents: number };
