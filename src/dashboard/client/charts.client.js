// @ts-check
// ── charts ──
const TICK_STEPS = [60e3, 120e3, 300e3, 600e3, 900e3, 1800e3, 3600e3, 7200e3, 10800e3, 21600e3, 43200e3, 86400e3, 172800e3, 604800e3];
/** @param {number} t0 @param {number} t1 @param {number} max */
function timeTicks(t0, t1, max) {
	const step = TICK_STEPS.find((s) => (t1 - t0) / s <= max) || 604800e3;
	const ticks = [];
	// On the viewer's round times, as the labels are local: a day's line at local midnight (walked
	// by the calendar, so a DST change between does not move the rest an hour), an hour's at :00
	// in a zone half an hour off UTC.
	if (step >= 86400e3) {
		const d = new Date(t0);
		d.setHours(0, 0, 0, 0);
		if (d.getTime() < t0) d.setDate(d.getDate() + 1);
		for (; d.getTime() <= t1; d.setDate(d.getDate() + step / 86400e3)) ticks.push(d.getTime());
		return { ticks, step };
	}
	if (step >= 3600e3) {
		// Hours walked on the local clock too, so 3h, 6h and 12h lines stay on round hours past a DST change.
		const hours = step / 3600e3;
		const d = new Date(t0);
		d.setMinutes(0, 0, 0);
		d.setHours(Math.ceil(d.getHours() / hours) * hours);
		while (d.getTime() < t0) d.setHours(d.getHours() + hours);
		for (; d.getTime() <= t1; d.setHours(d.getHours() + hours)) ticks.push(d.getTime());
		return { ticks, step };
	}
	const offset = -new Date(t0).getTimezoneOffset() * 60e3;
	for (let t = Math.ceil((t0 + offset) / step) * step - offset; t <= t1; t += step) ticks.push(t);
	return { ticks, step };
}
/** @param {number} t @param {number} step */
function tickLabel(t, step) {
	const d = new Date(t);
	if (step < 86400e3) return d.toLocaleTimeString("en-GB", { hour: "2-digit", minute: "2-digit" });
	return d.toLocaleDateString("en-GB", { day: "numeric", month: "short" });
}
/**
 * A value axis from 0 past v in about count equal steps of 1, 2 or 5 times a power of ten, so every
 * label is a round number (0 · 20K · 40K · 60K, not 0 · 6.3K · 13K · 19K · 25K).
 * @param {number} v @param {number} count @returns {{ max: number, step: number }}
 */
function niceAxis(v, count) {
	if (!(v > 0)) return { max: count, step: 1 };
	const rough = v / count;
	const p = Math.pow(10, Math.floor(Math.log10(rough)));
	const step = ([1, 2, 5, 10].find((m) => m * p >= rough) || 10) * p;
	return { max: Math.ceil(v / step) * step, step };
}
/** @param {number} n */
const compact = (n) => Intl.NumberFormat("en", { notation: "compact" }).format(n);
/** @type {CanvasRenderingContext2D | null} */
let measurer = null;
/**
 * `text` as it fits `room` (in the chart's units, where its CSS pixels are drawn) in the chart's
 * bold 11px labels, cut with … where it would not: a label wider than its margin ran out of the
 * chart's left edge and lost its start. Measured by a canvas, so it needs no drawn element.
 * @param {string} text @param {number} room
 */
function fitLabel(text, room) {
	measurer = measurer || document.createElement("canvas").getContext("2d");
	if (!measurer) return text;
	measurer.font = "600 11px " + getComputedStyle(document.body).fontFamily;
	const ctx = measurer;
	const fits = (/** @type {string} */ t) => ctx.measureText(t).width <= room;
	if (fits(text)) return text;
	const chars = [...text];
	let n = chars.length - 1;
	while (n > 1 && !fits(chars.slice(0, n).join("") + "…")) n--;
	return chars.slice(0, n).join("") + "…";
}
/**
 * A chart in its box, its left margin's labels in a sticky column over the margin at its scale: kept
 * in view as a phone scrolls the chart. Hidden from screen readers. The scroll padding keeps a
 * focused mark from under it (the chart scrolls only at its least width, 1000px).
 * @param {Element} box @param {SVGElement} chart @param {number} left @param {number} height @param {SVGElement[]} labels
 */
function drawPinned(box, chart, left, height, labels) {
	const W = /** @type {SVGSVGElement} */ (chart).viewBox.baseVal.width;
	const pinned = svg("svg", { viewBox: "0 0 " + left + " " + height, class: "pinned", "aria-hidden": "true" }, ...labels);
	// The page's styles allow no style attribute.
	pinned.style.width = (left / W) * 100 + "%";
	/** @type {HTMLElement} */ (box).style.scrollPaddingLeft = (left / W) * 1000 + "px";
	box.replaceChildren(h("div", { class: "plot" }, chart, pinned));
}
