// @ts-check
// ── The agent filter of the jobs list, the usage page and the incidents (pages.tsx: AgentFilter) ──
/**
 * An agent filter's field: `list` (its datalist) gets every agent's name, read a page at a time in
 * the background once the field is first used, never holding up the view; a suggestion picked, or
 * the name cleared, is applied at once (`apply`), other typing on Enter or leaving the field (the
 * form's). A view run again (signed out and in on its page) starts afresh; the listeners go with
 * the view (`signal`).
 * @param {HTMLInputElement} input @param {HTMLElement} list @param {() => void} apply @param {AbortSignal} signal
 */
function agentField(input, list, apply, signal) {
	/** @type {Set<string>} */
	const names = new Set();
	let suggesting = false;
	list.replaceChildren();
	input.addEventListener("focus", () => {
		if (suggesting) return;
		suggesting = true;
		(async () => {
			let after = null;
			do {
				// Names alone (view=names): the full list asks each agent's object for its state, 1,000
				// calls and 470 KB for a fleet of 1,000 agents, where names are all this needs.
				/** @type {AgentNamePage} */
				const page = await api("/v1/agents?view=names&limit=200" + (after ? "&cursor=" + enc(after) : ""), { signal });
				for (const a of page.agents) {
					names.add(a.name);
					list.append(h("option", { value: a.name }));
				}
				after = page.next_cursor;
			} while (after);
		})().catch((err) => {
			suggesting = false; // tried again at the next focus
			fail(err);
		});
	}, { signal });
	input.addEventListener("input", () => {
		if (!input.value || names.has(input.value)) apply();
	}, { signal });
}
