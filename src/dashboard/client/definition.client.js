// @ts-check
// ── an agent's definition: read as YAML, and for an admin edited in place ──
/**
 * The definition as the API writes it (GET …/definition: YAML, its revision the ETag), with where it
 * comes from. An API agent's is edited here by an admin, as `drover apply` changes it: the save names
 * the revision it was made on (If-Match), so a change someone made meanwhile is refused (412) rather
 * than overwritten, and the text typed is kept.
 * @param {string} agent @param {HTMLElement} body @returns {Promise<(Node | string)[]>}
 */
async function definitionView(agent, body) {
	const read = await definitionText(agent);
	const source = read.source === "file"
		? "From fleet.yaml (change it there and deploy)"
		: "Defined through the API";
	const back = async () => {
		body.replaceChildren(...(await definitionView(agent, body)));
		// The editor's button that had the focus is gone with it: on to the definition's Edit.
		if (!document.activeElement || document.activeElement === document.body) /** @type {HTMLElement | null} */ (body.querySelector(".definition-meta button"))?.focus();
	};
	/** @param {DefinitionText} from */
	const editor = (from) => {
		body.replaceChildren(...definitionEditor({ agent, read: from, back, saved: back }));
		/** @type {HTMLTextAreaElement} */ ($("#definition-text")).focus();
	};
	// A new agent begun from this one's definition, under another name: fleet.yaml's agents too, whose copy is an API agent.
	const duplicate = h("button", { type: "button", class: "small", "data-needs": "admin", text: "Duplicate", "aria-label": "Duplicate " + agent + " as a new agent", onclick: () => {
		body.replaceChildren(...definitionEditor({ agent: null, read: null, text: renamed(read.text, agent + "-copy"), back, saved: openCreated }));
		/** @type {HTMLTextAreaElement} */ ($("#definition-text")).focus();
	} });
	const actions = read.source === "api"
		? [
			h("button", { type: "button", class: "small", "data-needs": "admin", text: "Edit", onclick: () => editor(read) }),
			duplicate,
			h("button", { type: "button", class: "small danger", "data-needs": "admin", text: "Delete agent", onclick: (/** @type {Click} */ e) => act(e.currentTarget, async () => {
				const deleted = await ask({
					title: "Delete " + printable(agent),
					text: "Its schedules stop and its queued runs are cancelled; a run under way finishes. Its jobs and runs stay readable.",
					submit: "Delete agent",
					danger: true,
					run: () => api("/v1/agents/" + enc(agent), { method: "DELETE" }),
				});
				if (!deleted) return false;
				carryNotice("Deleted " + agent + ": its jobs and runs stay readable");
				// The fleet, where it is no longer listed.
				location.href = "/";
			}) }),
		]
		: [duplicate];
	return [
		h("p", { class: "muted small definition-meta" }, source, ", revision ", h("span", { class: "mono", text: read.revision }), "; ", h("code", { text: "drover definition " + agent }), " prints it too. ", ...actions),
		h("pre", { class: "text", text: printable(read.text) }),
	];
}
/**
 * @typedef {{ text: string, etag: string, revision: string, source: string }} DefinitionText
 * @param {string} agent @returns {Promise<DefinitionText>}
 */
async function definitionText(agent) {
	const res = await request("/v1/agents/" + enc(agent) + "/definition");
	const etag = res.headers.get("etag") || "";
	return { text: await res.text(), etag, revision: etag.replace(/^"|"$/g, ""), source: res.headers.get("x-drover-source") || "api" };
}
/** A definition's YAML with its top-level name replaced (a name is letters, digits and dashes: written bare). @param {string} yaml @param {string} name */
const renamed = (yaml, name) => yaml.replace(/^name: .*$/m, "name: " + name);
/** A created agent's runs page, the notice carried there. @param {AgentView & { definition_revision: string }} a */
function openCreated(a) {
	carryNotice("Created " + a.name + " (revision " + a.definition_revision + ")");
	location.href = "/agents/" + enc(a.name) + "/runs";
}
/** The offset of a 1-based line and column in text. @param {string} text @param {number} line @param {number} column */
function offsetOf(text, line, column) {
	let at = 0;
	for (let l = 1; l < line; l++) {
		const next = text.indexOf("\n", at);
		if (next < 0) return text.length;
		at = next + 1;
	}
	return Math.min(at + column - 1, text.length);
}
/**
 * The editor: the YAML in a textarea; Save (or Ctrl+Enter) puts it, or for a new agent (`read`
 * null) posts it; Cancel or Escape (asked first when it was changed) goes back. A refusal is said above the
 * buttons, each issue the API placed a button that puts the cursor there.
 * @param {{ agent: string | null, read: DefinitionText | null, back: () => Promise<unknown> | void, saved: (answer: AgentView & { definition_revision: string }) => Promise<unknown> | void, text?: string }} o
 */
function definitionEditor(o) {
	const { agent, read } = o;
	const start = read ? read.text : o.text || "";
	const lines = start.split("\n").length;
	const field = /** @type {HTMLTextAreaElement} */ (h("textarea", { id: "definition-text", class: "mono", rows: Math.min(Math.max(lines + 1, 8), 30), spellcheck: "false", autocomplete: "off", "aria-describedby": "definition-hint", "aria-keyshortcuts": MAC ? "Meta+Enter" : "Control+Enter" }));
	field.value = start;
	const keys = h("kbd", { text: MAC ? "⌘ Enter" : "Ctrl+Enter" });
	const message = h("div", { id: "definition-error", class: "message error", role: "alert", hidden: true });
	clearedByEdits(field);
	/** Takes the refusal away, and its tie to the field. */
	const unsay = () => {
		message.hidden = true;
		tieError(field, message, false);
	};
	const save = /** @type {HTMLButtonElement} */ (h("button", { type: "submit", class: "primary small", text: read ? "Save" : "Create" }));
	const cancel = /** @type {HTMLButtonElement} */ (h("button", { type: "button", class: "small", text: "Cancel" }));
	const check = /** @type {HTMLButtonElement} */ (h("button", { type: "button", class: "small", text: "Check" }));
	const checked = h("div", { class: "message checked", role: "status", hidden: true });
	const form = /** @type {HTMLFormElement} */ (h("form", { class: "definition-edit", "aria-label": read && agent ? "Edit " + agent + "'s definition" : "Define a new agent" },
		h("label", { for: field.id, text: read ? "Definition (YAML)" : "New agent (YAML)" }), field,
		read
			? h("p", { id: "definition-hint", class: "hint" }, "Saved as a change to revision ", h("span", { class: "mono", text: read.revision }), ": if the agent is changed meanwhile, the save is refused rather than overwrite that change. ", keys, " saves.")
			: h("p", { id: "definition-hint", class: "hint" }, "A fleet.yaml agent: its name, a prompt, and the schedules it runs on (cron, with a timezone, or an interval). ", keys, " creates it."),
		message,
		checked,
		h("div", { class: "buttons" }, save, check, cancel)));
	/** The save's request: a PUT on the revision read, or a POST; `dry` asks what it would do. @param {boolean} dry */
	const send = (dry) => read && agent
		? request("/v1/agents/" + enc(agent) + (dry ? "?dry_run=true" : ""), { method: "PUT", body: field.value, type: "application/yaml", headers: { "if-match": read.etag } })
		: request("/v1/agents" + (dry ? "?dry_run=true" : ""), { method: "POST", body: field.value, type: "application/yaml" });
	/** @param {ApiError} err */
	const refused = (err) => {
		checked.hidden = true;
		// In the text's order, by line then column (the API lists them by field).
		const issues = (err.issues || []).filter((i) => typeof i.line === "number")
			.sort((a, b) => /** @type {number} */ (a.line) - /** @type {number} */ (b.line) || (a.column || 0) - (b.column || 0));
		const said = err.status === 412 ? err.message + ". Your text is kept here."
			: issues.length ? (issues.length === 1 ? "Not saved: one problem in it, at its place:" : "Not saved: " + issues.length + " problems in it, each at its place:")
			: err.message;
		message.replaceChildren(h("p", { text: printable(said) }));
		if (issues.length) {
			message.append(h("ul", { class: "issues" }, issues.map((i) => h("li", null, h("button", { type: "button", class: "link", text: "Line " + i.line + ", column " + i.column, onclick: () => {
				const at = offsetOf(field.value, /** @type {number} */ (i.line), i.column || 1);
				field.focus();
				field.setSelectionRange(at, at);
			} }), ": " + printable((i.path === "body" ? "" : i.path + ": ") + i.message)))));
		}
		if (err.status === 412 && agent) {
			message.append(h("button", { type: "button", class: "small", text: "Load the current definition", onclick: (/** @type {Click} */ e) => act(e.currentTarget, async () => {
				const discard = await ask({ title: "Load " + printable(agent) + "'s current definition", text: "What you typed here is replaced by the definition as it is now.", submit: "Load it", danger: true, run: async () => true });
				if (!discard) return false;
				const current = await definitionText(agent);
				form.replaceWith(...definitionEditor({ ...o, read: current }));
				/** @type {HTMLTextAreaElement} */ ($("#definition-text")).focus();
			}) }));
		}
		message.hidden = false;
		// Said with the text too (a line's button puts the focus there), which is what was wrong unless
		// the refusal is of the revision it was made on (412) or the server's (a 400, or a 413 of its size, is of the text): invalid until edited.
		tieError(field, message, true, err.status === 400 || err.status === 413);
	};
	field.addEventListener("keydown", (/** @type {KeyboardEvent} */ e) => {
		if (e.key !== "Enter" || !(e.ctrlKey || e.metaKey)) return;
		e.preventDefault();
		form.requestSubmit();
	});
	// What the save would do, asked of the API with nothing stored: its revision, each schedule's next run, its warnings.
	check.addEventListener("click", () => act(check, async () => {
		unsay();
		checked.hidden = true;
		/** @type {DryRun} */
		let plan;
		try {
			plan = await (await send(true)).json();
		} catch (err) {
			if (!(err instanceof ApiError) || failMessage(err) === null) throw err;
			refused(err);
			return false;
		}
		const what = plan.action === "create" ? "Would create " + plan.name + " (revision " + plan.definition_revision + ")"
			: plan.action === "unchanged" ? "Nothing would change (revision " + plan.definition_revision + ")"
			: "Would save it as revision " + plan.definition_revision;
		checked.replaceChildren(
			h("p", { text: printable(what) + "." }),
			h("ul", null,
				plan.schedules.map((sc) => h("li", null, h("strong", { text: printable(sc.name) }), " ", h("span", { class: "mono", text: printable(sc.expression + (sc.timezone ? " " + sc.timezone : "")) }), " · ",
					sc.next_run ? ["next ", slotTime(sc.next_run)] : h("span", { text: sc.enabled ? "no next run" : "disabled" }))),
				plan.schedules.length ? null : h("li", { text: "No schedules: it runs when triggered." }),
				plan.warnings.map((w) => h("li", { class: "warning", text: "Warning: " + printable(w) }))));
		checked.hidden = false;
	}));
	cancel.addEventListener("click", () => act(cancel, async () => {
		const title = read && agent ? "Discard your changes to " + printable(agent) + "'s definition" : "Discard the new agent";
		if (field.value !== start && !(await ask({ title, text: read ? "The agent keeps its definition as it is." : "Nothing is created.", submit: "Discard", danger: true, run: async () => true }))) return false;
		await o.back();
	}));
	// Escape is Cancel, as in the dialogs (asked first when the text was changed). Not while a save
	// is under way (Cancel is then disabled), nor an Escape something inside took (a composition's).
	form.addEventListener("keydown", (/** @type {KeyboardEvent} */ e) => {
		if (e.key !== "Escape" || e.isComposing || e.defaultPrevented) return;
		e.preventDefault();
		cancel.click();
	});
	form.addEventListener("submit", (e) => {
		e.preventDefault();
		unsay();
		checked.hidden = true;
		field.readOnly = true;
		act(save, async () => {
			/** @type {AgentView & { definition_revision: string }} */
			let answer;
			try {
				answer = await (await send(false)).json();
			} catch (err) {
				field.readOnly = false;
				if (!(err instanceof ApiError) || failMessage(err) === null) throw err;
				refused(err);
				return false;
			}
			await o.saved(answer);
			if (read && agent) {
				notify(printable(answer.definition_revision === read.revision
					? "Saved " + agent + "'s definition: nothing in it changed"
					: "Saved " + agent + "'s definition: revision " + read.revision + " → " + answer.definition_revision), true);
			}
		});
	});
	return [form];
}
