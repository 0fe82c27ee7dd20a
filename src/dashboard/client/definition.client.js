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
	const edit = read.source === "api"
		? h("button", { type: "button", class: "small", "data-needs": "admin", text: "Edit", onclick: () => {
			body.replaceChildren(...definitionEditor(agent, read, body));
			/** @type {HTMLTextAreaElement} */ ($("#definition-text")).focus();
		} })
		: null;
	return [
		h("p", { class: "muted small definition-meta" }, source, ", revision ", h("span", { class: "mono", text: read.revision }), "; ", h("code", { text: "drover definition " + agent }), " prints it too. ", edit),
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
 * The editor: the YAML in a textarea; Save (or Ctrl+Enter) puts it, Cancel (asked first when it was
 * changed) goes back to the definition. A refusal is said above the buttons, each issue the API
 * placed a button that puts the cursor there.
 * @param {string} agent @param {DefinitionText} read @param {HTMLElement} body
 */
function definitionEditor(agent, read, body) {
	const lines = read.text.split("\n").length;
	const field = /** @type {HTMLTextAreaElement} */ (h("textarea", { id: "definition-text", class: "mono", rows: Math.min(Math.max(lines + 1, 8), 30), spellcheck: "false", autocomplete: "off", "aria-describedby": "definition-hint", "aria-keyshortcuts": MAC ? "Meta+Enter" : "Control+Enter" }));
	field.value = read.text;
	const message = h("div", { class: "message error", role: "alert", hidden: true });
	const save = /** @type {HTMLButtonElement} */ (h("button", { type: "submit", class: "primary small", text: "Save" }));
	const cancel = /** @type {HTMLButtonElement} */ (h("button", { type: "button", class: "small", text: "Cancel" }));
	const back = async () => body.replaceChildren(...(await definitionView(agent, body)));
	const form = /** @type {HTMLFormElement} */ (h("form", { class: "definition-edit", "aria-label": "Edit " + agent + "'s definition" },
		h("label", { for: field.id, text: "Definition (YAML)" }), field,
		h("p", { id: "definition-hint", class: "hint" }, "Saved as a change to revision ", h("span", { class: "mono", text: read.revision }), ": if the agent is changed meanwhile, the save is refused rather than overwrite that change. ", h("kbd", { text: MAC ? "⌘ Enter" : "Ctrl+Enter" }), " saves."),
		message,
		h("div", { class: "buttons" }, save, cancel)));
	/** @param {ApiError} err */
	const refused = (err) => {
		const issues = (err.issues || []).filter((i) => typeof i.line === "number");
		const said = err.status === 412 ? err.message + ". Your text is kept here."
			: issues.length ? "Not saved: " + (issues.length === 1 ? "a problem" : issues.length + " problems") + " in it, each at its place:"
			: err.message;
		message.replaceChildren(h("p", { text: printable(said) }));
		if (issues.length) {
			message.append(h("ul", { class: "issues" }, issues.map((i) => h("li", null, h("button", { type: "button", class: "link", text: "Line " + i.line + ", column " + i.column, onclick: () => {
				const at = offsetOf(field.value, /** @type {number} */ (i.line), i.column || 1);
				field.focus();
				field.setSelectionRange(at, at);
			} }), ": " + printable((i.path === "body" ? "" : i.path + ": ") + i.message)))));
		}
		if (err.status === 412) {
			message.append(h("button", { type: "button", class: "small", text: "Load the current definition", onclick: (/** @type {Click} */ e) => act(e.currentTarget, async () => {
				const discard = await ask({ title: "Load " + printable(agent) + "'s current definition", text: "What you typed here is replaced by the definition as it is now.", submit: "Load it", danger: true, run: async () => true });
				if (!discard) return false;
				const current = await definitionText(agent);
				body.replaceChildren(...definitionEditor(agent, current, body));
				/** @type {HTMLTextAreaElement} */ ($("#definition-text")).focus();
			}) }));
		}
		message.hidden = false;
	};
	field.addEventListener("keydown", (/** @type {KeyboardEvent} */ e) => {
		if (e.key !== "Enter" || !(e.ctrlKey || e.metaKey)) return;
		e.preventDefault();
		form.requestSubmit();
	});
	cancel.addEventListener("click", () => act(cancel, async () => {
		if (field.value !== read.text && !(await ask({ title: "Discard your changes to " + printable(agent) + "'s definition", text: "The agent keeps its definition as it is.", submit: "Discard", danger: true, run: async () => true }))) return false;
		await back();
	}, undefined, () => body.querySelector(".definition-meta button") || $("#agent-definition").querySelector("summary")));
	form.addEventListener("submit", (e) => {
		e.preventDefault();
		message.hidden = true;
		field.readOnly = true;
		act(save, async () => {
			/** @type {{ definition_revision: string }} */
			let saved;
			try {
				saved = await (await request("/v1/agents/" + enc(agent), { method: "PUT", body: field.value, type: "application/yaml", headers: { "if-match": read.etag } })).json();
			} catch (err) {
				field.readOnly = false;
				if (!(err instanceof ApiError) || failMessage(err) === null) throw err;
				refused(err);
				return false;
			}
			await back();
			notify(printable(saved.definition_revision === read.revision
				? "Saved " + agent + "'s definition: nothing in it changed"
				: "Saved " + agent + "'s definition: revision " + read.revision + " → " + saved.definition_revision), true);
		}, undefined, () => body.querySelector(".definition-meta button"));
	});
	return [form];
}
