// @ts-check
// ── dialogs: an action asked first in the page, with a prompt or a reason to give, or none ──
let dialogCount = 0;
const MAC = /Mac|iPhone|iPad/.test(navigator.userAgent);
/** "run" → "runs", "deny" → "denies": the verb a dialog's button names, said of Ctrl+Enter. @param {string} verb */
const thirdPerson = (verb) => (/[^aeiou]y$/.test(verb) ? verb.slice(0, -1) + "ies" : /(s|sh|ch|x|z)$/.test(verb) ? verb + "es" : verb + "s");
/**
 * Opens a modal <dialog> saying what o.run will do, with its text field if it has one (o.field: a
 * multi-line prompt, or a one-line reason; without one, it is a confirmation), the primary button
 * and Cancel (o.dismiss renames it); Escape cancels too. In a multi-line field Ctrl+Enter (⌘ Enter on a Mac) submits, in
 * a one-line field Enter. The action runs inside it: its buttons are disabled and it cannot be closed
 * meanwhile (Escape included), and what it throws is said in the dialog, which stays open with the
 * text as typed; once it is done, the dialog closes. Resolves when the dialog has closed: true if the
 * action was done, false if nothing was (cancelled, or closed at sign-out).
 * @param {AskOptions} o @returns {Promise<boolean>}
 */
function ask(o) {
	const id = "ask-" + ++dialogCount;
	const f = o.field;
	const oneLine = !!(f && f.oneLine);
	const keys = MAC ? "⌘ Enter" : "Ctrl+Enter";
	/** @type {HTMLTextAreaElement | HTMLInputElement | null} */
	let field = null;
	if (f) {
		const attrs = { id: id + "-field", placeholder: f.placeholder || null, maxlength: f.maxLength || null, "aria-describedby": id + "-hint" };
		field = oneLine
			? /** @type {HTMLInputElement} */ (h("input", { ...attrs, type: "text", autocomplete: "off" }))
			: /** @type {HTMLTextAreaElement} */ (h("textarea", { ...attrs, rows: 6, "aria-keyshortcuts": MAC ? "Meta+Enter" : "Control+Enter" }));
	}
	// An option the action takes besides the text (cancel's force), unticked until ticked.
	const c = o.check;
	const checkbox = c ? /** @type {HTMLInputElement} */ (h("input", { id: id + "-check", type: "checkbox", "aria-describedby": id + "-check-hint" })) : null;
	const message = h("p", { id: id + "-message", class: "message", role: "alert", hidden: true });
	const submit = /** @type {HTMLButtonElement} */ (h("button", { type: "submit", class: o.danger ? "primary danger" : "primary", text: o.submit }));
	const cancel = /** @type {HTMLButtonElement} */ (h("button", { type: "button", text: o.dismiss || "Cancel" }));
	const form = /** @type {HTMLFormElement} */ (h("form", null,
		h("h2", { id: id + "-title", text: o.title }),
		h("p", { id: id + "-text", text: o.text }),
		f && field ? [
			h("label", { for: field.id, text: f.label }),
			field,
			// (Enter in a one-line field goes without saying.)
			h("p", { id: id + "-hint", class: "hint" }, f.hint, oneLine ? null : [" ", h("kbd", { text: keys }), " " + thirdPerson(o.submit.toLowerCase()) + "."]),
		] : null,
		c && checkbox ? h("div", { class: "check" },
			h("label", null, checkbox, " " + c.label),
			h("p", { id: id + "-check-hint", class: "hint", text: c.hint })) : null,
		message,
		h("div", { class: "buttons" }, submit, cancel)));
	const dialog = /** @type {HTMLDialogElement} */ (h("dialog", { class: "ask", "aria-labelledby": id + "-title", "aria-describedby": id + "-text" }, form));
	const signal = viewAbort.signal;
	// The button that opened it: focused, or (disabled by act() as it opened this) the one act() ran from.
	const opener = document.activeElement && document.activeElement !== document.body ? document.activeElement : actingButton;
	actingButton = null;
	let busy = false;
	let done = false;
	/** @type {HTMLElement | null} What takes the focus once the action has ended and the dialog stays. */
	let next = null;
	/** @param {string} text @param {"error" | "question"} kind */
	const say = (text, kind) => {
		message.textContent = printable(text);
		message.className = "message " + kind;
		message.hidden = false;
	};
	/**
	 * Says an error, and gives the focus back to the field, which it is tied to (said with it there);
	 * `invalid`: it is of the text typed. @param {string} text @param {boolean} invalid @returns {false}
	 */
	const error = (text, invalid) => {
		say(text, "error");
		if (field) tieError(field, message, true, invalid);
		next = field || submit;
		return false;
	};
	if (field) clearedByEdits(field);
	/** @type {AskControl} */
	const control = {
		// What the action finds wrong with the text (none given where one is needed).
		error: (text) => error(text, true),
		question: (text, label) => {
			say(text, "question");
			submit.textContent = label;
			next = submit;
			return false;
		},
	};
	const close = () => {
		if (dialog.open) dialog.close();
	};
	return new Promise((resolve) => {
		// Escape is Cancel, except while the action runs: its outcome is still to be said here. The
		// key itself is refused too, as Chromium lets a page refuse the cancel event only once between
		// two clicks or key presses (a close watcher's rule; Escape does not count), and a second
		// Escape would close the dialog. On the document: the disabled button may have had the focus.
		/** @param {KeyboardEvent} e */
		const escape = (e) => {
			if (busy && e.key === "Escape") e.preventDefault();
		};
		document.addEventListener("keydown", escape, true);
		dialog.addEventListener("cancel", (e) => {
			if (busy) e.preventDefault();
		});
		dialog.addEventListener("close", () => {
			document.removeEventListener("keydown", escape, true);
			dialog.remove();
			signal.removeEventListener("abort", close);
			// Back to the button that opened it. act() keeps that button disabled until the action the
			// dialog ran has finished, a moment after this, and a disabled button takes no focus.
			const refocus = (/** @type {number} */ tries) => {
				if (signal.aborted || !(opener instanceof HTMLElement) || !opener.isConnected) return;
				if (opener instanceof HTMLButtonElement && opener.disabled && tries < 40) setTimeout(() => refocus(tries + 1), 25);
				else opener.focus();
			};
			refocus(0);
			resolve(done);
		});
		cancel.addEventListener("click", close);
		if (field && !oneLine) field.addEventListener("keydown", (/** @type {Event} */ e) => {
			const k = /** @type {KeyboardEvent} */ (e);
			if (k.key !== "Enter" || !(k.ctrlKey || k.metaKey)) return;
			k.preventDefault();
			form.requestSubmit();
		});
		form.addEventListener("submit", async (e) => {
			e.preventDefault();
			if (busy) return;
			busy = true;
			submit.disabled = cancel.disabled = true;
			if (field) field.readOnly = true;
			if (checkbox) checkbox.disabled = true;
			message.hidden = true;
			if (field) tieError(field, message, false);
			next = null;
			let stay = false;
			let ok = false;
			try {
				stay = (await o.run(field ? field.value.trim() : "", control, checkbox ? checkbox.checked : false)) === false;
				ok = !stay;
			} catch (err) {
				// Said where it was asked; to the page if the dialog was closed meanwhile (signed out:
				// nothing is said of a 401, as the sign-in form has said it).
				const text = failMessage(err);
				stay = text !== null;
				// Of the text when the API refused the request (a 400: a prompt too long), else of the action.
				if (text !== null && dialog.open) error(text, err instanceof ApiError && err.status === 400);
				else if (text !== null) fail(err);
			}
			busy = false;
			submit.disabled = cancel.disabled = false;
			if (field) field.readOnly = false;
			if (checkbox) checkbox.disabled = false;
			// (Set by the action's control, which the checker does not see run: read as the type it has.)
			const then = /** @type {HTMLElement | null} */ (next);
			if (!stay) {
				done = ok;
				close();
			} else if (then) then.focus();
		});
		// Signed out meanwhile: nothing is left open over the sign-in form.
		signal.addEventListener("abort", close);
		document.body.append(dialog);
		dialog.showModal();
		// A destructive confirmation without a field starts on its dismiss button: one Enter keeps things as they are.
		(field || (o.danger ? cancel : submit)).focus();
	});
}
