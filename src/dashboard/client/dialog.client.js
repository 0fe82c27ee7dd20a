// @ts-check
// ── dialogs: an action that starts a paid job, asked in the page with an optional multi-line prompt ──
let dialogCount = 0;
const MAC = /Mac|iPhone|iPad/.test(navigator.userAgent);
/**
 * Opens a modal <dialog> saying what o.run will do, with a text field (a prompt, empty meaning the
 * default), the primary button and Cancel; Escape cancels too, and Ctrl+Enter (⌘ Enter on a Mac) in
 * the field submits. The action runs inside it: its buttons are disabled and it cannot be closed
 * meanwhile (Escape included), and what it throws is said in the dialog, which stays open with the
 * text as typed; once it is done, the dialog closes. Resolves when the dialog has closed, however that came about.
 * @param {AskOptions} o @returns {Promise<void>}
 */
function ask(o) {
	const id = "ask-" + ++dialogCount;
	const keys = MAC ? "⌘ Enter" : "Ctrl+Enter";
	const field = /** @type {HTMLTextAreaElement} */ (h("textarea", { id: id + "-field", rows: 6, placeholder: o.placeholder || null, "aria-describedby": id + "-hint", "aria-keyshortcuts": MAC ? "Meta+Enter" : "Control+Enter" }));
	const message = h("p", { class: "message", role: "alert", hidden: true });
	const submit = /** @type {HTMLButtonElement} */ (h("button", { type: "submit", class: "primary", text: o.submit }));
	const cancel = /** @type {HTMLButtonElement} */ (h("button", { type: "button", text: "Cancel" }));
	const form = /** @type {HTMLFormElement} */ (h("form", null,
		h("h2", { id: id + "-title", text: o.title }),
		h("p", { id: id + "-text", text: o.text }),
		h("label", { for: field.id, text: o.label }),
		field,
		h("p", { id: id + "-hint", class: "hint" }, o.hint, " ", h("kbd", { text: keys }), " " + o.submit.toLowerCase() + "s."),
		message,
		h("div", { class: "buttons" }, submit, cancel)));
	const dialog = /** @type {HTMLDialogElement} */ (h("dialog", { class: "ask", "aria-labelledby": id + "-title", "aria-describedby": id + "-text" }, form));
	const signal = viewAbort.signal;
	const opener = document.activeElement;
	let busy = false;
	/** @type {HTMLElement | null} What takes the focus once the action has ended and the dialog stays. */
	let next = null;
	/** @param {string} text @param {"error" | "question"} kind */
	const say = (text, kind) => {
		message.textContent = printable(text);
		message.className = "message " + kind;
		message.hidden = false;
	};
	/** @type {AskControl} */
	const control = {
		error: (text) => {
			say(text, "error");
			next = field;
			return false;
		},
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
			if (!signal.aborted && opener instanceof HTMLElement && opener.isConnected) opener.focus();
			resolve();
		});
		cancel.addEventListener("click", close);
		field.addEventListener("keydown", (/** @type {KeyboardEvent} */ e) => {
			if (e.key !== "Enter" || !(e.ctrlKey || e.metaKey)) return;
			e.preventDefault();
			form.requestSubmit();
		});
		form.addEventListener("submit", async (e) => {
			e.preventDefault();
			if (busy) return;
			busy = true;
			submit.disabled = cancel.disabled = true;
			field.readOnly = true;
			message.hidden = true;
			next = null;
			let stay = false;
			try {
				stay = (await o.run(field.value.trim(), control)) === false;
			} catch (err) {
				// Said where it was asked; to the page if the dialog was closed meanwhile (signed out:
				// nothing is said of a 401, as the sign-in form has said it).
				const text = failMessage(err);
				stay = text !== null;
				if (text !== null && dialog.open) control.error(text);
				else if (text !== null) fail(err);
			}
			busy = false;
			submit.disabled = cancel.disabled = false;
			field.readOnly = false;
			// (Set by the action's control, which the checker does not see run: read as the type it has.)
			const then = /** @type {HTMLElement | null} */ (next);
			if (!stay) close();
			else if (then) then.focus();
		});
		// Signed out meanwhile: nothing is left open over the sign-in form.
		signal.addEventListener("abort", close);
		document.body.append(dialog);
		dialog.showModal();
		field.focus();
	});
}
