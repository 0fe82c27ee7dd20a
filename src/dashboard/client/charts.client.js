// @ts-check
// ── charts ──
const TICK_STEPS = [60e3, 120e3, 300e3, 600e3, 900e3, 1800e3, 3600e3, 7200e3, 10800e3, 21600e3, 43200e3, 86400e3, 172800e3, 604800e3];
/** @param {number} t0 @param {number} t1 @param {number} max */
function timeTicks(t0, t1, max) {
	const step = TICK_STEPS.find((s) => (t1 - t0) / s <= max) || 604800e3;
	const ticks = [];
	for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) ticks.push(t);
	return { ticks, step };
}
/** @param {number} t @param {number} step */
function tickLabel(t, step) {
	const d = new Date(t);
	if (step < 86400e3) return d.toLocaleTimeString("en-GB", { hour: "2-digit", minute: "2-digit" });
	return d.toLocaleDateString("en-GB", { day: "numeric", month: "short" });
}
/** @param {number} v */
function niceMax(v) {
	if (v <= 0) return 1;
	const p = Math.pow(10, Math.floor(Math.log10(v)));
	for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
	return 10 * p;
}
/** @param {number} n */
const compact = (n) => Intl.NumberFormat("en", { notation: "compact" }).format(n);
