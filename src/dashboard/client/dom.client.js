// @ts-check
// ── the page: what the server-rendered shell says it is ──
const TOKEN_KEY = "drover.token";
const VIEW = document.body.dataset.view || "";
const SUBJECT = document.body.dataset.subject || "";
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
	redraw();
	if (key === null || (document.activeElement && box.contains(document.activeElement))) return;
	const again = [...box.querySelectorAll("a, button, input, select, textarea, [tabindex]")].find((el) => focusKey(el) === key);
	if (again instanceof HTMLElement) again.focus();
}
/** @param {Element} el */
const focusKey = (el) => [el.tagName, el.getAttribute("aria-label"), el.getAttribute("href"), el.textContent].join("\u0000");
