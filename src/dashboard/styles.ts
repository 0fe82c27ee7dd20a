// The dashboard's stylesheet and icon, served from /ui/* (the CSP allows no inline styles).

export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#1f3b57"/><path d="M8 22V10h6.5a6 6 0 0 1 0 12z" fill="none" stroke="#9ed0ff" stroke-width="3"/></svg>`;

export const APP_CSS = String.raw`
:root {
	--bg: #f5f6f8;
	--panel: #ffffff;
	--ink: #1d2430;
	--muted: #667085;
	--line: #e3e6eb;
	/* the edge of a field or button: 3:1 on the page and on white (WCAG 1.4.11); --line is for panels and rules */
	--control-line: #868e96;
	--accent: #1a5fd0; /* 5.4:1 on the page, 5.4:1 on --warn-bg (an auto-paused row), 5.9:1 under white text */
	--accent-ink: #ffffff;
	--danger: #c92a2a;
	--warn-bg: #fff4e0;
	--warn-line: #f0a020;
	--top: #1f3b57;
	--mono: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
	/* occurrence and status colours, shared by badges, the runs timeline and the legend */
	--on-time: #2f9e44;
	--late: #f08c00;
	--catch-up: #1c7ed6;
	--manual: #0c8599;
	--skipped: #adb5bd;
	--unknown: #7048e8;
	--failed: #e03131;
	/* surfaces: a field's or button's fill, a table's head and hovered row, code */
	--field: #ffffff;
	--head: #fafbfc;
	--hover: #fafcff;
	--code-bg: #f8f9fb;
	--control-hover: #4b5565;
	--danger-ink: #ffffff;
	/* a failure's and a success's notice; the amber of a warning's text */
	--bad-bg: #fff1f1;
	--bad-line: #f1b0b0;
	--bad-ink: #8a1c1c;
	--ok-bg: #effaf2;
	--ok-line: #a8dcb5;
	--ok-ink: #1e6b34;
	--warn-ink: #7a4b00;
	--warn-text: #8a5300;
	/* badge tones, each ink 4.5:1 or more on its fill */
	--grey-bg: #eef0f3;
	--grey-ink: #475467;
	--blue-bg: #e7f0ff;
	--blue-ink: #1849a9;
	--green-bg: #e6f6ea;
	--green-ink: #1e6b34;
	--red-bg: #fdecec;
	--red-ink: #a11d1d;
	--amber-bg: #fff4e0;
	--amber-line: #f5c97a;
	--violet-bg: #f1ecfe;
	--violet-ink: #5a34c7;
	--auto-bg: #ffe8bf;
	--chart-line: #c8ced6;
	--chart-grid: #eef0f3;
	/* the edge shade of a box that scrolls sideways (.table-wrap) */
	--scroll-shade: rgba(0,0,0,.16);
	color-scheme: light dark;
}
@media print { :root { color-scheme: light; } }
/* A reader who asked for a dark scheme: the same roles, dark, at the same contrasts (text 4.5:1, edges 3:1).
   On screen only: printing drops backgrounds, and light ink would go on white paper. */
@media screen and (prefers-color-scheme: dark) {
	:root {
		--bg: #0f1419;
		--panel: #171d25;
		--ink: #e3e8ef;
		--muted: #9aa6b5;
		--line: #2c3540;
		--control-line: #6b7785;
		--accent: #6ea8fe;
		--accent-ink: #0f1419;
		--danger: #ff7b7b;
		--danger-ink: #1a0b0b;
		--warn-bg: #3a2a10;
		--warn-line: #c98a1c;
		--top: #15283b;
		--field: #1d242d;
		--head: #1b222b;
		--hover: #1c2430;
		--code-bg: #11161c;
		--control-hover: #9aa6b5;
		--bad-bg: #3a1616;
		--bad-line: #7a2e2e;
		--bad-ink: #ffb3b3;
		--ok-bg: #10301c;
		--ok-line: #2e6b40;
		--ok-ink: #a6e3b5;
		--warn-ink: #ffcf80;
		--warn-text: #ffcf80;
		--grey-bg: #2a323c;
		--grey-ink: #c5cdd8;
		--blue-bg: #15305a;
		--blue-ink: #a9c8ff;
		--green-bg: #153a22;
		--green-ink: #9be0ae;
		--red-bg: #4a1a1a;
		--red-ink: #ffb0b0;
		--amber-bg: #45300c;
		--amber-line: #8a6420;
		--violet-bg: #2f2457;
		--violet-ink: #cbbcff;
		--auto-bg: #5a3c08;
		--chart-line: #4a5563;
		--chart-grid: #252d37;
		/* a dark shade hardly shows on a dark panel (the light scheme's was 1.05:1 on it, black itself is
		   1.24:1): a light one, 1.65:1 at the edge, where the light scheme's is 1.45:1 on white */
		--scroll-shade: rgba(255,255,255,.16);
	}
}

* { box-sizing: border-box; }
[hidden] { display: none !important; }
/* read by screen readers, not drawn */
.sr-only { position: absolute; width: 1px; height: 1px; margin: -1px; padding: 0; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
html { font-size: 14px; }
body {
	margin: 0;
	font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
	color: var(--ink);
	background: var(--bg);
	line-height: 1.45;
}
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
/* a link inside muted text (a fleet row's "logs") is hardly another colour: underlined (WCAG 1.4.1) */
td .sub a, p a { text-decoration: underline; }
h1 { font-size: 1.45rem; margin: 0; font-weight: 600; }
h2 { font-size: 1.05rem; margin: 0 0 .6rem; font-weight: 600; }
h3 { font-size: .9rem; margin: 1rem 0 .3rem; color: var(--muted); font-weight: 600; text-transform: uppercase; letter-spacing: .03em; }
.mono, code { font-family: var(--mono); font-size: .92em; }
.muted { color: var(--muted); }
.small { font-size: .86em; }
.error { color: var(--danger); margin: .5rem 0 0; }

/* ── frame ── */
/* wraps on a narrow screen: the session's pill and Sign out go to a line of their own, still on the bar */
.topbar {
	display: flex; flex-wrap: wrap; align-items: center; gap: .4rem 2rem;
	padding: .5rem 1.5rem; min-height: 52px;
	background: var(--top); color: #fff;
}
.brand { color: #fff; font-weight: 700; font-size: 1.15rem; letter-spacing: .02em; }
.topbar nav { display: flex; flex-wrap: wrap; gap: .25rem; }
.topbar nav a { color: #c9d6e3; padding: .4rem .75rem; border-radius: 6px; }
.topbar nav a:hover { background: rgba(255,255,255,.08); text-decoration: none; }
.topbar nav a[aria-current="page"] { color: #fff; background: rgba(255,255,255,.15); }
.topbar nav a .count { margin-left: .35rem; padding: 0 .4rem; border-radius: 999px; font-size: .75rem; background: #f59f00; color: #1a1a1a; }
.session { margin-left: auto; display: flex; flex-wrap: wrap; justify-content: flex-end; align-items: center; gap: .4rem .75rem; min-width: 0; }
.whoami { font-size: .82rem; color: #c9d6e3; overflow-wrap: anywhere; }
/* its edge 3:1 on the bar, light or dark */
.topbar .ghost { white-space: nowrap; }
.topbar .ghost { color: #c9d6e3; border-color: rgba(255,255,255,.5); background: transparent; }
/* the pill's details, under the bar's end: a popover is laid out in the top layer, not beside its button */
.scheduler-details {
	inset: auto; top: 3.4rem; right: 1rem; margin: 0; width: min(34rem, calc(100vw - 2rem)); max-height: 70vh; overflow: auto;
	padding: .75rem 1rem; border: 1px solid var(--control-line); border-radius: 8px; background: var(--bg); color: var(--ink);
	box-shadow: 0 6px 24px rgba(0,0,0,.25); font-size: .9rem;
}
.scheduler-details ul { margin: .4rem 0 0; padding-left: 1.2rem; }
.scheduler-details li + li { margin-top: .3rem; }
.scheduler-details p { margin: 0; }
/* under the pill itself where the browser can say where that is: the bar wraps on a narrow screen */
@supports (anchor-name: --a) {
	#scheduler-pill { anchor-name: --scheduler-pill; }
	.scheduler-details { position-anchor: --scheduler-pill; top: calc(anchor(bottom) + .4rem); right: max(.5rem, anchor(right)); }
}
/* a phone's bar puts the pill anywhere on its own line: the screen's width, less a margin */
@media (max-width: 640px) {
	.scheduler-details { left: .5rem; right: .5rem; width: auto; }
}
main { max-width: 1400px; margin: 0 auto; padding: 1.25rem 1.5rem 3rem; }
/* the skip link: off the screen until it has the focus, then over the bar's start */
.skip { position: absolute; left: .5rem; top: -3rem; z-index: 10; padding: .4rem .75rem; border-radius: 6px; background: var(--bg); color: var(--accent); text-decoration: underline; }
.skip:focus { top: .5rem; }
/* focused only as the skip link's target, a start for Tab rather than a control: no ring round the page */
main:focus { outline: none; }
.notice {
	max-width: 1400px; margin: .75rem auto 0; padding: .6rem 1rem;
	border: 1px solid var(--bad-line); background: var(--bad-bg); color: var(--bad-ink); border-radius: 6px;
	display: flex; gap: 1rem; justify-content: space-between; align-items: center;
}
.notice.ok { border-color: var(--ok-line); background: var(--ok-bg); color: var(--ok-ink); }
.notice button { padding: .1rem .5rem; }

/* ── controls ── */
button {
	font: inherit; cursor: pointer;
	padding: .35rem .8rem; border-radius: 6px;
	border: 1px solid var(--control-line); background: var(--field); color: var(--ink);
}
button:hover { border-color: var(--control-hover); }
button:disabled, button[aria-disabled="true"] { opacity: .55; cursor: default; }
button[aria-disabled="true"]:hover { border-color: var(--control-line); }
button.primary { background: var(--accent); border-color: var(--accent); color: var(--accent-ink); }
button.danger { color: var(--danger); border-color: var(--danger); }
button.danger:hover { background: var(--bad-bg); }
button.primary.danger { background: var(--danger); border-color: var(--danger); color: var(--danger-ink); }
button.small { padding: .15rem .55rem; font-size: .88em; }
input, select, textarea {
	font: inherit; color: inherit;
	padding: .35rem .5rem; border: 1px solid var(--control-line); border-radius: 6px; background: var(--field);
}
textarea { width: 100%; font-family: var(--mono); font-size: .9em; resize: vertical; }
.buttons { display: flex; gap: .5rem; flex-wrap: wrap; }
.filters { display: flex; gap: 1rem; margin: 0 0 1rem; flex-wrap: wrap; }
.filters label { display: flex; flex-direction: column; gap: .2rem; font-size: .85em; color: var(--muted); }
.filters select, .filters input { min-width: 12rem; color: var(--ink); }
.filters .error { flex-basis: 100%; margin: 0; }

/* ── dialogs (every action asked first: run now, pause, fork, continue, cancel…): a panel over the dimmed page ── */
dialog.ask {
	width: min(36rem, calc(100vw - 1.5rem)); max-height: calc(100vh - 1.5rem); overflow: auto;
	padding: 1.1rem 1.25rem; color: var(--ink); background: var(--panel);
	border: 1px solid var(--line); border-radius: 10px; box-shadow: 0 12px 32px rgba(16, 24, 40, .25);
}
dialog.ask::backdrop { background: rgba(15, 23, 32, .45); }
dialog.ask h2 { overflow-wrap: anywhere; }
dialog.ask p { margin: 0 0 .6rem; }
dialog.ask label { display: block; font-weight: 600; margin: .9rem 0 .3rem; }
dialog.ask textarea { min-height: 8rem; }
dialog.ask input { width: 100%; }
dialog.ask .check label { font-weight: 400; }
dialog.ask input[type="checkbox"] { width: auto; margin: 0 .35rem 0 0; }
dialog.ask .hint { margin: .3rem 0 0; color: var(--muted); font-size: .86em; }
dialog.ask .message { margin: .75rem 0 0; padding: .5rem .75rem; border-radius: 6px; overflow-wrap: anywhere; white-space: pre-wrap; }
dialog.ask .message.error { border: 1px solid var(--bad-line); background: var(--bad-bg); color: var(--bad-ink); }
dialog.ask .message.question { border: 1px solid var(--warn-line); background: var(--warn-bg); color: var(--warn-ink); }
dialog.ask .buttons { justify-content: flex-end; margin-top: 1rem; }
kbd { font-family: var(--mono); font-size: .9em; padding: 0 .3rem; border: 1px solid var(--chart-line); border-bottom-width: 2px; border-radius: 4px; background: var(--code-bg); white-space: nowrap; }

/* ── sign-in ── */
body:not([data-role="operate"]):not([data-role="admin"]) [data-needs="operate"] { display: none !important; }
body:not([data-role="admin"]) [data-needs="admin"] { display: none !important; }
body:not([data-role="read"]) [data-only="read"] { display: none !important; }
#job-manifest[data-ended] .deadline { display: none; }
/* what a token without that role is shown in an action's place (the approval's input, as text) */
body[data-role="operate"] [data-lacks="operate"], body[data-role="admin"] [data-lacks="operate"] { display: none !important; }
.signin, .missing { max-width: 26rem; margin: 4rem auto; background: var(--panel); padding: 2rem; border-radius: 10px; border: 1px solid var(--line); }
.signin form { display: flex; flex-direction: column; gap: .5rem; }
.signin label { font-weight: 600; margin-top: .5rem; }
.signin h1 { margin-bottom: .5rem; }

/* ── views ── */
.view-head { display: flex; align-items: center; justify-content: space-between; gap: 1rem; margin: .25rem 0 1rem; flex-wrap: wrap; }
.view-head h1 { display: flex; flex-wrap: wrap; align-items: center; gap: .75rem; min-width: 0; overflow-wrap: anywhere; }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 1rem 1.1rem; margin-bottom: 1rem; }
.panel-head { display: flex; align-items: center; justify-content: space-between; }
.session-panel { display: flex; align-items: center; justify-content: space-between; gap: 1rem; }
.session-panel p { margin: 0; }
#job-manifest { margin-top: .9rem; }
#job-manifest summary, #job-tool-calls summary, .agent-about summary { cursor: pointer; font-weight: 600; }
.agent-about details + details { margin-top: .6rem; }
.agent-about details[open] summary { margin-bottom: .6rem; }
#job-tool-calls[open] summary { margin-bottom: .6rem; }
.note-actions { display: flex; gap: .4rem; margin-top: .3rem; }
.notepad-write { margin-top: .9rem; max-width: 44rem; }
.notepad-write label { display: block; font-weight: 600; margin: .6rem 0 .3rem; }
.notepad-write input { width: 100%; }
.notepad-write .hint { margin: .3rem 0 0; color: var(--muted); font-size: .86em; }
.notepad-write .message { margin: .6rem 0 0; padding: .5rem .75rem; border-radius: 6px; overflow-wrap: anywhere; white-space: pre-wrap; border: 1px solid var(--bad-line); background: var(--bad-bg); color: var(--bad-ink); }
.notepad-write .buttons { margin-top: .6rem; }
.definition-meta button { margin-left: .4rem; }
.definition-edit { margin-top: .5rem; }
.definition-edit label { display: block; font-weight: 600; margin: .3rem 0 .3rem; }
.definition-edit textarea { width: 100%; font-family: var(--mono); font-size: .9em; tab-size: 2; white-space: pre; overflow-wrap: normal; overflow-x: auto; }
.definition-edit .hint { margin: .3rem 0 0; color: var(--muted); font-size: .86em; }
.definition-edit .message { margin: .6rem 0 0; padding: .5rem .75rem; border-radius: 6px; overflow-wrap: anywhere; white-space: pre-wrap; border: 1px solid var(--bad-line); background: var(--bad-bg); color: var(--bad-ink); }
.definition-edit .message p { margin: 0; }
.definition-edit .message.checked { border-color: var(--line); background: var(--code-bg); color: inherit; }
.definition-edit .message .warning { color: var(--warn-ink); }
.definition-edit button.link { background: none; border: 0; padding: 0; color: inherit; font: inherit; font-weight: 600; text-decoration: underline; cursor: pointer; }
.definition-edit .message ul { margin: .4rem 0 .4rem 1.1rem; padding: 0; }
.definition-edit .buttons { margin-top: .6rem; }
.columns { display: grid; grid-template-columns: minmax(0, 1.15fr) minmax(0, 1fr); gap: 1rem; }
.columns > div > .panel:last-child { margin-bottom: 1rem; }
.empty { color: var(--muted); text-align: center; padding: 2rem; background: var(--panel); border: 1px dashed var(--line); border-radius: 8px; }
.pager { display: flex; justify-content: center; gap: 0.5rem; margin: 1rem 0; }

/* a table wider than the screen scrolls inside its own box, not the page */
/* (positioned: a screen-reader-only header inside, which is absolute, would otherwise widen the page) */
.table-wrap { max-width: 100%; overflow-x: auto; position: relative; border-radius: 8px; }
/* a cue that it scrolls: a shade at an edge with more beyond it (the panel-coloured covers scroll with
   the table and hide the shade at an end); the table is see-through for it, the box painting its panel */
.table-wrap { background: linear-gradient(to right, var(--panel) 40%, transparent) left / 2rem 100% no-repeat local, linear-gradient(to left, var(--panel) 40%, transparent) right / 2rem 100% no-repeat local, linear-gradient(to right, var(--scroll-shade), transparent) left / .7rem 100% no-repeat, linear-gradient(to left, var(--scroll-shade), transparent) right / .7rem 100% no-repeat, var(--panel); }
.table-wrap > table.grid { background: transparent; }
.nowrap { white-space: nowrap; }
table.grid { width: 100%; border-collapse: collapse; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; overflow: hidden; }
table.grid th { text-align: left; font-weight: 600; font-size: .82em; color: var(--muted); text-transform: uppercase; letter-spacing: .03em; background: var(--head); }
table.grid th, table.grid td { padding: .55rem .75rem; border-bottom: 1px solid var(--line); vertical-align: top; }
table.grid tbody tr:last-child td { border-bottom: 0; }
table.grid tbody tr:hover { background: var(--hover); }
table.grid.compact th, table.grid.compact td { padding: .35rem .5rem; }
table.grid .num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.grid .actions { text-align: right; white-space: nowrap; }
table.grid td.actions button + button { margin-left: .35rem; }
/* a tool call's input and result: whole words kept, a long one scrolls in its cell */
table.tool-calls .wrap { display: block; white-space: pre-wrap; overflow-wrap: anywhere; max-height: 9em; overflow: auto; font-family: var(--mono); font-size: .85em; }
table.grid tfoot td { font-weight: 600; border-top: 1px solid var(--line); border-bottom: 0; }
/* ids and names are read as a whole: never broken at their hyphens */
table.grid td a, table.grid td .mono, table.grid td.mono { white-space: nowrap; }
/* but a fleet row's agent name, up to 63 characters, which made the Agent column 530px wide and put the row's actions off a phone's screen */
#fleet-table td:first-child strong a { display: inline-block; max-width: 18rem; white-space: normal; overflow-wrap: anywhere; }
/* Text from agents and models may be right-to-left: each cell and line takes the direction of its own first letter. */
table.grid td, .reason, pre { unicode-bidi: plaintext; }
/* a job's summary, up to 500 characters in a list: two lines of it, so that a long one makes neither a tall row nor
   (a table cell's max-width does nothing) a table wider than the page; the whole is the cell's title */
td.summary > div { unicode-bidi: plaintext; max-width: 28rem; min-width: 12rem; overflow: hidden; overflow-wrap: anywhere; display: -webkit-box; -webkit-box-orient: vertical; -webkit-line-clamp: 2; line-clamp: 2; }
td.summary > div.ended-by { color: var(--danger); }
td.error-text { max-width: 26rem; min-width: 12rem; word-break: break-word; }
/* Beneath what it qualifies (slotTime's relative time): in a table cell, and in the editor's Check result too */
.sub { display: block; color: var(--muted); font-size: .86em; }
td .sub.warn, .warn-text { color: var(--warn-text); }
ul.plain { list-style: none; margin: 0; padding: 0; }
ul.plain li + li { margin-top: .2rem; }

/* an automatically paused agent cannot run until its cause is fixed: make it stand out */
tr.auto-paused td { background: var(--warn-bg); }
tr.auto-paused td:first-child { box-shadow: inset 4px 0 0 var(--warn-line); }
.reason { display: block; font-size: .86em; color: var(--warn-ink); margin-top: .2rem; max-width: 22rem; word-break: break-word; }

/* ── badges ── */
.badge {
	display: inline-block; padding: .05rem .5rem; border-radius: 999px;
	font-size: .8rem; font-weight: 600; white-space: nowrap;
	background: var(--grey-bg); color: var(--grey-ink); border: 1px solid transparent;
}
.badge.s-running { background: var(--blue-bg); color: var(--blue-ink); }
.badge.s-approval_pending, .badge.d-pending { background: var(--amber-bg); color: var(--warn-text); border-color: var(--amber-line); }
.badge.s-completed, .badge.active, .badge.d-delivered, .badge.i-resolved { background: var(--green-bg); color: var(--green-ink); }
.badge.s-failed, .badge.d-failed, .badge.i-detected, .badge.i-alerted { background: var(--red-bg); color: var(--red-ink); }
.badge.s-indeterminate, .badge.s-unknown, .badge.d-unknown { background: var(--violet-bg); color: var(--violet-ink); }
.badge.auto-paused { background: var(--auto-bg); color: var(--warn-ink); border-color: var(--warn-line); }
/* pending, cancelled, paused, disabled, claimed, skipped, suppressed, closed: the grey above */
.pill { overflow-wrap: anywhere; font-size: .82rem; padding: .1rem .6rem; border-radius: 999px; background: rgba(255,255,255,.12); color: #dbe6f0; }
button.pill { border: 0; line-height: inherit; }
.pill.bad { background: #e03131; color: #fff; }
.pill.warn { background: #f59f00; color: #1a1a1a; }
.panel .pill { background: var(--grey-bg); color: var(--grey-ink); }
.panel .pill.live { background: var(--blue-bg); color: var(--blue-ink); }
.panel .pill.live::before { content: ""; display: inline-block; width: .5rem; height: .5rem; border-radius: 50%; background: #1c7ed6; margin-right: .35rem; animation: pulse 1.2s ease-in-out infinite; }
.panel .pill.reconnecting { background: var(--amber-bg); color: var(--warn-text); }
@keyframes pulse { 50% { opacity: .25; } }
/* a live job's dot would blink for as long as the job runs, hours maybe (WCAG 2.2.2): still, if asked */
@media (prefers-reduced-motion: reduce) {
	.panel .pill.live::before { animation: none; }
}

/* ── job page ── */
.facts { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: .3rem 1rem; margin: 0; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; word-break: break-word; }
pre.text { margin: 0; white-space: pre-wrap; word-break: break-word; background: var(--code-bg); border: 1px solid var(--line); border-radius: 6px; padding: .6rem .75rem; font-family: var(--mono); font-size: .88em; max-height: 16rem; overflow: auto; }
.approval { border-color: var(--warn-line); background: var(--warn-bg); }
.approval textarea { margin: .3rem 0 .6rem; background: var(--field); }
.timeline { list-style: none; margin: 0; padding: 0 0 0 1rem; border-left: 2px solid var(--line); }
.timeline li { position: relative; padding: 0 0 .7rem .5rem; }
.timeline li::before { content: ""; position: absolute; left: -1.4rem; top: .35rem; width: .6rem; height: .6rem; border-radius: 50%; background: #98a2b3; border: 2px solid var(--panel); }
.timeline li.to-completed::before { background: var(--on-time); }
.timeline li.to-failed::before { background: var(--failed); }
.timeline li.to-running::before { background: var(--catch-up); }
.timeline li.to-approval_pending::before { background: var(--late); }
.timeline .reason-text { overflow-wrap: anywhere; display: block; color: var(--muted); font-size: .88em; }
.log-earlier { margin: 0 0 .5rem; }
.log-history { margin: 0 0 1rem; }
.log-history-nav { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem; }
.log-history-nav input { width: 9rem; }
ol.log {
	list-style: none; margin: .5rem 0 0; padding: .5rem 0;
	background: #0f1720; color: #d7dee8; border-radius: 6px;
	font-family: var(--mono); font-size: .85em;
	max-height: 28rem; overflow: auto;
}
ol.log li { display: grid; grid-template-columns: var(--n) 5.5rem 10rem 1fr; gap: .5rem; padding: .1rem .75rem; }
/* The number column fits five digits; a longer log's widens with its numbers (a 100 MB output runs
   to seven), which overran the times beside them. */
ol.log { --n: 2.5rem; }
ol.log[data-digits="6"] { --n: 6ch; }
ol.log[data-digits="7"] { --n: 7ch; }
ol.log[data-digits="8"] { --n: 8ch; }
ol.log[data-digits="9"] { --n: 9ch; }
/* Lines scrolled out of the log's box are not laid out or painted until shown (a one-line estimate
   holds their place, their real height once seen): a 20,000-line log was laid out whole at each
   batch of lines it drew. */
ol.log li[data-line] { content-visibility: auto; contain-intrinsic-size: auto 1.3em; }
ol.log li:hover { background: #17212d; }
ol.log .n { color: #8494a8; text-align: right; } /* 5.8:1 on the log, 5.2:1 on a hovered line */
ol.log .ts { color: #7f8fa3; }
ol.log .type { color: #9ed0ff; }
ol.log .body { white-space: pre-wrap; word-break: break-word; }
ol.log li.t-error .type, ol.log li.t-error .body { color: #ff8a8a; }
ol.log li.t-tool_use .type { color: #ffd08a; }
ol.log li.t-tool_result .type { color: #a6e3a1; }
ol.log li.t-system .type { color: #b4a7f5; }
ol.log li.placeholder { display: block; color: #7f8fa3; }

/* ── charts ── */
/* drawn 1200 wide: never shrunk below 1000px (text stays 10px or more), scrolled sideways instead */
.chart { overflow-x: auto; }
.chart svg { display: block; width: 100%; min-width: 1000px; height: auto; }
/* a chart's margin labels (usage's value axis, runs' lanes), over its left margin (one grid cell holds
   both): sticky, so a phone scrolled to the newest days still has them; its panel-coloured ground hides
   what scrolls under it. The cell is as wide as the chart, so it can stick all the way. */
.chart .plot { display: grid; grid-template-columns: minmax(0, 1fr); min-width: 1000px; }
.chart .plot > svg { grid-area: 1 / 1; }
.chart .pinned { min-width: 0; justify-self: start; align-self: start; position: sticky; left: 0; background: var(--panel); }
.chart .axis line, .chart .axis path { stroke: var(--chart-line); }
.chart .grid-line { stroke: var(--chart-grid); }
.chart text { font-size: 11px; fill: var(--muted); font-family: inherit; }
.chart text.lane { fill: var(--ink); font-weight: 600; }
.chart .lane-line { stroke: var(--chart-grid); }
.chart .mark, .legend-mark .mark { stroke: var(--panel); stroke-width: 1.5; }
/* skipped and unknown runs are rings and hollow squares: their shape, not only their colour, says so;
   after the rule above, which they override by order (same specificity), in the legend too */
.mark.run-skipped, .mark.run-unknown { fill: var(--panel); stroke-width: 2.5; }
.mark.run-skipped { stroke: var(--skipped); }
.mark.run-unknown { stroke: var(--unknown); }
.legend-mark { width: 1rem; height: 1rem; flex: none; }
td .legend-mark { vertical-align: -.2em; }
.chart .mark:hover, .chart .bar:hover { opacity: .8; }
.chart .open { fill-opacity: .35; }
.chart .range { opacity: .5; }
.legend { list-style: none; display: flex; gap: 1.25rem; flex-wrap: wrap; margin: .75rem 0 0; padding: 0; font-size: .88em; color: var(--muted); }
.legend li { display: flex; align-items: center; gap: .35rem; max-width: 100%; overflow-wrap: anywhere; }
.swatch { display: inline-block; width: .8rem; height: .8rem; border-radius: 3px; }
.run-on-time { fill: var(--on-time); background: var(--on-time); }
.run-late { fill: var(--late); background: var(--late); }
.run-catch-up { fill: var(--catch-up); background: var(--catch-up); }
.run-manual { fill: var(--manual); background: var(--manual); }
.run-skipped { fill: var(--skipped); background: var(--skipped); }
.run-unknown { fill: var(--unknown); background: var(--unknown); }
.run-failed { fill: var(--failed); background: var(--failed); }
.series-0 { fill: #1c7ed6; background: #1c7ed6; }
.series-1 { fill: #f08c00; background: #f08c00; }
.series-2 { fill: #2f9e44; background: #2f9e44; }
.series-3 { fill: #7048e8; background: #7048e8; }
.series-4 { fill: #e03131; background: #e03131; }
.series-5 { fill: #0c8599; background: #0c8599; }
.series-6 { fill: #d6336c; background: #d6336c; }
.series-7 { fill: #5c940d; background: #5c940d; }
.series-other { fill: #adb5bd; background: #adb5bd; }

/* Windows High Contrast and other forced colours: backgrounds become the system's, which took away
   the legend's and the Dispatch column's swatches (the chart's marks keep their fills: they have to
   keep their key), and the current section's only mark */
@media (forced-colors: active) {
	.swatch, .legend-mark { forced-color-adjust: none; }
	.topbar nav a[aria-current="page"] { text-decoration: underline; outline: 1px solid CanvasText; }
}

@media (max-width: 1000px) {
	.columns { grid-template-columns: minmax(0, 1fr); }
}
@media (max-width: 640px) {
	.topbar { gap: .4rem 1rem; padding: .5rem .75rem; }
	.topbar nav a { padding: .4rem .5rem; }
	main { padding: 1rem .75rem 2rem; }
	.notice { margin: .5rem .75rem 0; }
	/* a log line's number, time and type on one row, its text beneath at the full width */
	ol.log li { grid-template-columns: var(--n) auto 1fr; padding: .2rem .5rem; }
	ol.log .body { grid-column: 1 / -1; padding-left: calc(var(--n) + .5rem); }
}
`;
