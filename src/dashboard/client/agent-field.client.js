// @ts-check
// ── The agent filter of the jobs list, the usage page and the incidents (pages.tsx: AgentFilter) ──
/** The names one suggestion read asks for (the API's page): past them, a name typed further narrows them. */
const AGENT_SUGGESTIONS = 200;
/**
 * An agent filter's field: `list` (its datalist) gets the names of the agents whose name starts with
 * what is typed, one page of them (AGENT_SUGGESTIONS) read in the background once the field is first
 * used and again as the typing rests, never holding up the view; a suggestion picked, or the name
 * cleared, is applied at once (`apply`), other typing on Enter or leaving the field (the form's). A
 * fleet's every name was read a page at a time at the first focus: 6 requests for 1,000 agents, 51
 * and 10,000 options for 10,000; now one, and none more while the names held already cover what is
 * typed (all of them, for a fleet of up to 200). A view run again (signed out and in on its page)
 * starts afresh; the listeners go with the view (`signal`).
 * @param {HTMLInputElement} input @param {HTMLElement} list @param {() => void} apply @param {AbortSignal} signal
 */
function agentField(input, list, apply, signal) {
	/** Every name suggested so far: one of them typed or picked is applied at once. @type {Set<string>} */
	const names = new Set();
	/** The start the list's names were read for, and whether they are all its agents (no next page). @type {{ prefix: string, complete: boolean } | null} */
	let held = null;
	let asked = 0;
	let settle = 0;
	list.replaceChildren();
	const suggest = async () => {
		const prefix = input.value.trim();
		// A start no name has is not asked of the API (it would refuse it).
		if (prefix && !AGENT_NAME_PATTERN.test(prefix)) return;
		// The names held cover it: the datalist narrows them itself as the typing goes on.
		if (held && (held.prefix === prefix || (held.complete && prefix.startsWith(held.prefix)))) return;
		const mine = ++asked;
		/** @type {AgentNamePage} */
		const page = await api("/v1/agents?view=names&limit=" + AGENT_SUGGESTIONS + (prefix ? "&prefix=" + enc(prefix) : ""), { signal });
		if (mine !== asked) return; // a later start was asked meanwhile
		held = { prefix, complete: !page.next_cursor };
		for (const a of page.agents) names.add(a.name);
		list.replaceChildren(...page.agents.map((a) => h("option", { value: a.name })));
	};
	const refresh = () => suggest().catch(fail);
	input.addEventListener("focus", refresh, { signal });
	input.addEventListener("input", () => {
		clearTimeout(settle);
		if (!input.value || names.has(input.value)) apply();
		// A name picked is applied, nothing more to suggest; else the names of what is typed once it rests.
		if (!names.has(input.value)) settle = setTimeout(refresh, FILTER_SETTLE_MS);
	}, { signal });
	signal.addEventListener("abort", () => clearTimeout(settle));
}
