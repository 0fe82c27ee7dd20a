// @ts-check
// ── the page: what the server-rendered shell says it is ──
const TOKEN_KEY = "drover.token";
const VIEW = document.body.dataset.view || "";
const SUBJECT = document.body.dataset.subject || "";
/** The title the server gave the page: its view's (the sign-in form shows another while it is up). */
const PAGE_TITLE = document.title;
const FINAL = ["completed", "failed", "cancelled", "indeterminate"];
const enc = encodeURIComponent;
/**
 * The shell's element for sel: pages.tsx renders every one a view looks up. Typed any, as a view uses
 * what it finds as the input, form, table or button it is.
 * @type {(sel: string, root?: ParentNode) => any}
 */
const $ = (sel, root) => (root || document).querySelector(sel);

// ── DOM building: strings always become text nodes or attribute values ──
const SVG_NS = "http://www.w3.org/2000/svg";
// Child (what an element is built from) and Attrs (its attributes) are in types.d.ts.
/** @param {Element} el @param {Attrs} attrs */
function setAttrs(el, attrs) {
	if (!attrs) return;
	for (const [k, v] of Object.entries(attrs)) {
		if (v === null || v === undefined || v === false) continue;
		if (k === "text") el.textContent = String(v);
		else if (k.startsWith("on")) el.addEventListener(k.slice(2), /** @type {EventListener} */ (v));
		else el.setAttribute(k, v === true ? "" : String(v));
	}
}
/** @param {Element} el @param {Child} child */
function add(el, child) {
	if (child === null || child === undefined || child === false) return;
	if (Array.isArray(child)) {
		for (const c of child) add(el, c);
		return;
	}
	el.append(child instanceof Node ? child : document.createTextNode(String(child)));
}
/** @param {string} tag @param {Attrs} attrs @param {...Child} children */
function h(tag, attrs, ...children) {
	const el = document.createElement(tag);
	setAttrs(el, attrs);
	add(el, children);
	return el;
}
/** @param {string} tag @param {Attrs} attrs @param {...Child} children */
function svg(tag, attrs, ...children) {
	const el = document.createElementNS(SVG_NS, tag);
	setAttrs(el, attrs);
	add(el, children);
	return el;
}
/**
 * Runs `redraw`, which rebuilds `box`'s contents (a poll's fresh rows), keeping keyboard focus on
 * the control that had it: the same link or button in the new rows, found by its label, link and
 * text. Without it, every 10 s poll sent a keyboard or screen-reader user back to the top.
 * @param {Element} box @param {() => void} redraw
 */
function keepingFocus(box, redraw) {
	const had = document.activeElement;
	const key = had instanceof HTMLElement && had !== box && box.contains(had) ? focusKey(had) : null;
	const place = key === null || !had ? null : placeOf(had);
	redraw();
	if (key === null || (document.activeElement && box.contains(document.activeElement))) return;
	const again = [...box.querySelectorAll(CONTROLS)].find((el) => focusKey(el) === key);
	// A control whose words changed (Pause is Resume once someone paused the agent): the one at its place in its row.
	const there = again || (place && atPlace(place));
	if (there instanceof HTMLElement) there.focus();
}
/** @param {Element} el */
const focusKey = (el) => [el.tagName, el.getAttribute("aria-label"), el.getAttribute("href"), el.textContent].join("\u0000");
const CONTROLS = "a[href], button, input, select, textarea, [tabindex]";
/**
 * Where a control sits in a list's row (a fleet row's data-agent, a job's, an incident's): its cell,
 * and its place among that cell's controls, which stay put when the row's other cells change.
 * @param {Element} el
 */
function placeOf(el) {
	const row = el.closest("[data-agent], [data-job], [data-incident]");
	const cell = el.closest("td");
	if (!(row instanceof HTMLElement) || !cell) return null;
	const key = ["agent", "job", "incident"].find((k) => row.dataset[k] !== undefined) || "";
	return { sel: "[data-" + key + '="' + CSS.escape(row.dataset[key] || "") + '"]', cell: cell.cellIndex, index: [...cell.querySelectorAll(CONTROLS)].indexOf(el) };
}
/**
 * The control at that place as the row is drawn now (Pause's place holds Resume once paused), else
 * its row's first (a closed incident's Close is gone).
 * @param {{ sel: string, cell: number, index: number }} place
 */
function atPlace(place) {
	const row = document.querySelector(place.sel);
	if (!(row instanceof HTMLTableRowElement)) return null;
	const cell = row.cells[place.cell];
	const here = cell ? [...cell.querySelectorAll(CONTROLS)].filter(shown) : [];
	return here[place.index] || here[0] || [...row.querySelectorAll(CONTROLS)].find(shown) || null;
}
/** @param {Element} el */
const shown = (el) => el.isConnected && el.getClientRects().length > 0;
/**
 * Focuses el, or the view's heading (which says what the page is about, and a job's status) when
 * el is gone: focus left on the page reads as nothing, and another browser or a screen reader's
 * cursor starts again from the top.
 * @param {Element | null} el
 */
function focusOn(el) {
	const target = el && shown(el) ? el : $("#view h1");
	if (!(target instanceof HTMLElement)) return;
	if (!target.matches(CONTROLS)) target.tabIndex = -1;
	target.focus();
}
/**
 * Ties an error message to the field it is about, as the first of the field's descriptions (its hint
 * kept after it): said with the field when it has or takes the focus, as the message's alert may be
 * cut off by the focus's announcement, or said before the reader reached the field. `invalid`: what
 * was typed in it is what was wrong (aria-invalid), until it is edited (clearedByEdits). Untied (and
 * no longer invalid) with `tied` false, when the message goes.
 * @param {Element} field @param {Element} message (with an id) @param {boolean} tied @param {boolean} [invalid]
 */
function tieError(field, message, tied, invalid = false) {
	const others = (field.getAttribute("aria-describedby") || "").split(/\s+/).filter((id) => id && id !== message.id);
	const ids = tied ? [message.id, ...others] : others;
	if (ids.length) field.setAttribute("aria-describedby", ids.join(" "));
	else field.removeAttribute("aria-describedby");
	if (tied && invalid) field.setAttribute("aria-invalid", "true");
	else field.removeAttribute("aria-invalid");
}
/** A field tieError marked invalid is no longer once edited: the edit may have mended it. @param {Element} field @param {AbortSignal} [signal] */
function clearedByEdits(field, signal) {
	field.addEventListener("input", () => field.removeAttribute("aria-invalid"), { signal });
}
/**
 * A filter form's refusals, said in its `message` rather than the page's notice: the function returned
 * takes what a load threw, and if it is a 400 whose issues name some of the fields `names` (a malformed
 * agent name), says it there, tied to those fields (tieError), invalid until edited, and returns true;
 * anything else (null after a load that succeeded) takes the message and the ties away, and returns false.
 * @param {HTMLFormElement} form @param {HTMLElement} message @param {string[]} names @param {AbortSignal} signal
 * @returns {(err: unknown) => boolean}
 */
function filterRefusal(form, message, names, signal) {
	const fields = names.map((n) => /** @type {Element} */ (form.elements.namedItem(n)));
	for (const f of fields) clearedByEdits(f, signal);
	return (err) => {
		const named = err instanceof ApiError && err.status === 400 ? err.issues.map((i) => i.path).filter((p) => names.includes(p)) : [];
		// Set only when it changes: a poll of the refused filter would have it read out again each time.
		setText(message, named.length ? printable(/** @type {ApiError} */ (err).message) : "");
		message.hidden = !named.length;
		names.forEach((n, i) => tieError(fields[i], message, named.includes(n), true));
		return named.length > 0;
	};
}
/**
 * Puts the address's `names` filters in the form's fields; those a select cannot take (?status=bogus:
 * it would list everything, the address still saying otherwise) are taken out of `params` and
 * returned, "name=value", for the view to say and the address to drop.
 * @param {HTMLFormElement} form @param {string[]} names @param {URLSearchParams} params @returns {string[]}
 */
function filtersFromAddress(form, names, params) {
	/** @type {string[]} */
	const ignored = [];
	for (const k of names) {
		const value = params.get(k);
		if (!value) continue;
		const field = /** @type {HTMLInputElement | HTMLSelectElement} */ (form.elements.namedItem(k));
		field.value = value;
		if (field instanceof HTMLSelectElement && field.value !== value) {
			ignored.push(k + "=" + value);
			params.delete(k);
		}
	}
	return ignored;
}
/**
 * Says the address's filters a list could not take, and takes them out of the address (`path`).
 * @param {string} path @param {string[]} ignored @param {URLSearchParams} params
 */
function sayIgnoredFilters(path, ignored, params) {
	if (!ignored.length) return;
	notify("Not a filter this list has, so left out: " + printable(ignored.join(", ")) + ".");
	const q = params.toString();
	history.replaceState(null, "", path + (q ? "?" + q : ""));
}
/**
 * Why a list filtered by `agent` is empty when no agent has that name: the API's 404 message, else
 * null. A list answers a mistyped agent's filter as an idle agent's (empty), so it is asked of the
 * agent's own jobs route, which knows a deleted agent's too, as the CLI asks.
 * @param {string | null} agent @param {AbortSignal} signal @returns {Promise<string | null>}
 */
async function agentMissing(agent, signal) {
	if (!agent) return null;
	try {
		await api("/v1/agents/" + enc(agent) + "/jobs?limit=1", { signal });
		return null;
	} catch (err) {
		if (err instanceof ApiError && err.status === 404) return err.message;
		throw err;
	}
}
/**
 * A list's filters as applied (not text typed but not yet applied: what the list, its pages and its
 * polls show), and `apply`, which takes the form's (`query`) when they changed: the address made to
 * match (`path`), the list loaded afresh; a filter the API refused (a malformed agent name) said in
 * the form, tied to its field, until a later load succeeds; another failure said as a poll's is.
 * @param {string} path @param {() => URLSearchParams} query @param {(reset: boolean) => Promise<void>} load
 * @param {(err: unknown) => boolean} refusedFilter
 */
function appliedFilters(path, query, load, refusedFilter) {
	const filters = {
		applied: query().toString(),
		apply() {
			const q = query().toString();
			if (q === filters.applied) return;
			filters.applied = q;
			history.replaceState(null, "", path + (q ? "?" + q : ""));
			load(true).then(() => {
				refusedFilter(null);
				pollSucceeded();
			}, (err) => {
				if (!refusedFilter(err)) pollFailed(err);
			});
		},
	};
	return filters;
}
/** How long a filter's keys rest before what they stepped to or typed applies (a select, a time, the fleet's search). */
const FILTER_SETTLE_MS = 500;
/**
 * Applies a filter form's changes (`apply`) as the jobs, incidents and usage lists want them: a pick
 * with the mouse, or from a select's opened list, at once; a closed select stepped through with the
 * arrow keys (each step a change: going from "any status" to "failed" sent four requests) or a time
 * typed a part at a time (the year's digits make 0002, 0020, 0202, 2026) once the keys have rested a
 * moment, or the field is left. Enter in the form applies at once.
 * @param {HTMLFormElement} form @param {() => void} apply @param {AbortSignal} signal
 */
function appliedOnSettle(form, apply, signal) {
	let keyed = false;
	let settle = 0;
	form.addEventListener("keydown", (/** @type {KeyboardEvent} */ e) => {
		// Alt+Down opens the list instead.
		keyed = e.target instanceof HTMLSelectElement && !e.altKey && /^(Arrow|Page|Home|End)/.test(e.key);
	}, { signal });
	form.addEventListener("pointerdown", () => { keyed = false; }, { signal });
	form.addEventListener("focusout", () => {
		if (!settle) return;
		clearTimeout(settle);
		settle = 0;
		apply();
	}, { signal });
	signal.addEventListener("abort", () => clearTimeout(settle));
	form.onchange = (/** @type {Event} */ e) => {
		clearTimeout(settle);
		settle = 0;
		const typed = e.target instanceof HTMLInputElement && e.target.type === "datetime-local";
		if (!typed && !(keyed && e.target instanceof HTMLSelectElement)) return apply();
		keyed = false;
		settle = setTimeout(() => {
			settle = 0;
			apply();
		}, FILTER_SETTLE_MS);
	};
	form.onsubmit = (/** @type {Event} */ e) => {
		e.preventDefault();
		clearTimeout(settle);
		settle = 0;
		apply();
	};
}
/**
 * Sets a live region's text only when it changes: text set again, the same, is a new node, which a
 * screen reader reads out again (at every 10 s poll). @param {Element} el @param {string} text
 */
function setText(el, text) {
	if (el.textContent !== text) el.textContent = text;
}
/**
 * The key and record each list row was drawn from (rowFor), so that a redraw can keep the rows whose
 * record has not changed, and the view run that drew it: a row's buttons call back into that run
 * (its reload, its signal), so a view run again after signing out and in draws its rows afresh.
 * @type {WeakMap<Element, { from: string, run: AbortSignal }>}
 */
const drawnFrom = new WeakMap();
/**
 * A list's row for `item`, remembered as drawn from it (its key and its JSON) by this view run.
 * @template T @param {string} key @param {T} item @param {(item: T) => HTMLElement} draw
 */
function rowFor(key, item, draw) {
	const row = draw(item);
	drawnFrom.set(row, { from: key + "\u0000" + JSON.stringify(item), run: viewAbort.signal });
	return row;
}
/**
 * Puts the rows of `items` in `box`, in order, keeping each row whose item is the same as it was
 * drawn from and drawing only the others: a poll that found nothing changed rebuilt every row (the
 * 7,000 nodes of a 1,000-agent fleet every time), taking away the text a reader had selected in
 * it, and the row under the pointer or the focus.
 * @template T @param {Element} box @param {T[]} items @param {(item: T) => string} keyOf @param {(item: T) => HTMLElement} draw
 */
function syncRows(box, items, keyOf, draw) {
	/** @type {Map<string, Element>} */
	const drawn = new Map();
	for (const row of box.children) {
		const drew = drawnFrom.get(row);
		if (drew !== undefined && drew.run === viewAbort.signal && !drawn.has(drew.from)) drawn.set(drew.from, row);
	}
	const rows = items.map((item) => {
		const key = keyOf(item);
		const from = key + "\u0000" + JSON.stringify(item);
		const kept = drawn.get(from);
		if (!kept) return rowFor(key, item, draw);
		drawn.delete(from);
		return kept;
	});
	// The rows not kept go first, so that a kept one is moved only where the order changed: every
	// row after a changed one moved, or put back in its own place, would lose a selection in it.
	const keep = new Set(rows);
	for (const row of [...box.children]) if (!keep.has(row)) row.remove();
	let at = box.firstElementChild;
	for (const row of rows) {
		if (row === at) at = at.nextElementSibling;
		else box.insertBefore(row, at);
	}
}

/** Hands `blob` to the browser as a download named `name` (what the page read with its token: a plain link would go without it). @param {Blob} blob @param {string} name */
function saveFile(blob, name) {
	const url = URL.createObjectURL(blob);
	const a = h("a", { href: url, download: name, hidden: true });
	document.body.append(a);
	a.click();
	a.remove();
	setTimeout(() => URL.revokeObjectURL(url), 60000);
}

// ── boxes that scroll: reachable by keyboard while they do ──
/** What may scroll inside its own box: a table or chart wider than a phone, a long text or log, a tool call's input. */
const SCROLLERS = ".table-wrap, .chart, pre.text, ol.log, table.tool-calls .wrap";
/** Boxes of text alone (log lines, a prompt): not searched for something to focus, which a live log's 10,000 lines would cost each frame. */
const TEXT_ONLY = "pre.text, ol.log";
const TABBABLE = 'a[href]:not([tabindex="-1"]), button:not([tabindex="-1"]), input, select, textarea, summary, [tabindex="0"]';
/** @type {Set<Element>} */
const scrollersToFit = new Set();
/**
 * Puts a box in the tab order while its content overflows it and nothing in it takes the focus (as
 * Chromium and Firefox do of themselves): Safari gives such a box no focus, so a keyboard could not
 * scroll to a phone's hidden columns, a chart's older days or a long prompt's end (WCAG 2.1.1).
 * Checked once a frame, for the boxes whose size or content changed.
 * @param {Element} box
 */
function fitScroller(box) {
	if (!scrollersToFit.size) requestAnimationFrame(() => {
		for (const b of scrollersToFit) {
			const scrolls = b.isConnected && (b.scrollWidth > b.clientWidth + 1 || b.scrollHeight > b.clientHeight + 1) && (b.matches(TEXT_ONLY) || !b.querySelector(TABBABLE));
			if (scrolls) b.setAttribute("tabindex", "0");
			// Not taken from the box that has the focus (it would drop to the page's start): once it leaves.
			else if (b === document.activeElement) b.addEventListener("blur", () => fitScroller(b), { once: true });
			else b.removeAttribute("tabindex");
		}
		scrollersToFit.clear();
	});
	scrollersToFit.add(box);
}
const scrollerSizes = new ResizeObserver((entries) => {
	for (const e of entries) fitScroller(e.target);
});
/** @param {Element} root */
const watchScrollers = (root) => {
	for (const box of [...(root.matches(SCROLLERS) ? [root] : []), ...root.querySelectorAll(SCROLLERS)]) {
		scrollerSizes.observe(box);
		fitScroller(box);
	}
};
new MutationObserver((records) => {
	for (const r of records) {
		const at = r.target instanceof Element ? r.target : r.target.parentElement;
		const inside = at && at.closest(SCROLLERS);
		// Content changed inside a box (rows, lines, text); else boxes may have been added.
		if (inside) fitScroller(inside);
		else for (const n of r.addedNodes) if (n instanceof Element) watchScrollers(n);
	}
}).observe(document.body, { childList: true, subtree: true, characterData: true });
watchScrollers(document.body);
