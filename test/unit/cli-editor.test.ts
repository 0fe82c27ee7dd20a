import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { ApiClient, ApiError, CliError } from "../../cli/client.ts";
import type { Context } from "../../cli/context.ts";
import { inEditFile, requireEditor } from "../../cli/editor.ts";
import { paint } from "../../cli/format.ts";

// `drover edit` and `notepad edit` (cli/editor.ts): vi refused without a terminal, an editor that is
// set run as set, and the edit's file, removed after, or kept and named when the edit was refused.

const saved = { VISUAL: process.env.VISUAL, EDITOR: process.env.EDITOR };
afterEach(() => {
	for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k];
	else process.env[k] = v;
});
const ctxOf = (stdinIsTTY: boolean, stdoutIsTTY: boolean) =>
	({ client: new ApiClient({ url: "http://drover.example.test", token: undefined }), p: paint(false), ep: paint(false), width: undefined, stdoutIsTTY, stderrIsTTY: false, stdinIsTTY, globalArgs: [], out() {}, err() {}, json() {} }) satisfies Context;
const refusal = (ctx: Context) => {
	try {
		requireEditor(ctx, "edit", "use drover apply");
		return null;
	} catch (err) {
		return err;
	}
};

describe("the editor", () => {
	it("vi, neither VISUAL nor EDITOR set, is refused (exit 2) unless stdin and stdout are both terminals, naming the one that is not", () => {
		delete process.env.VISUAL;
		delete process.env.EDITOR;
		expect(refusal(ctxOf(true, true))).toBeNull();
		expect(refusal(ctxOf(true, false))).toMatchObject({ exitCode: 2, message: "edit opens vi (neither VISUAL nor EDITOR is set), which needs a terminal, and stdout is not one: nothing was opened", hint: "in a script, use drover apply, or set EDITOR to a command that edits the file it is given" });
		expect(refusal(ctxOf(false, true))).toMatchObject({ exitCode: 2, message: expect.stringContaining("and stdin is not one") });
	});

	it("set in VISUAL or in EDITOR is run, terminal or not", () => {
		delete process.env.VISUAL;
		process.env.EDITOR = "sed -i s/a/b/";
		expect(refusal(ctxOf(false, false))).toBeNull();
		delete process.env.EDITOR;
		process.env.VISUAL = "code --wait";
		expect(refusal(ctxOf(false, false))).toBeNull();
	});
});

describe("the edit's file", () => {
	it("is removed after a use that succeeds", async () => {
		let path = "";
		expect(await inEditFile("a.yaml", "x", (t) => t, async (file) => ((path = file), await writeFile(file, "y"), 7))).toBe(7);
		expect(existsSync(path)).toBe(false);
	});

	it("changed and refused is kept and named, the API's error kept with its status and request id", async () => {
		let path = "";
		const err = await inEditFile("a.yaml", "x", (t) => t, async (file) => {
			path = file;
			await writeFile(file, "changed");
			throw new ApiError(412, "precondition_failed", "changed meanwhile", undefined, "req-1");
		}).catch((e: unknown) => e);
		expect(err).toBeInstanceOf(ApiError);
		expect(err).toMatchObject({ status: 412, requestId: "req-1", message: "changed meanwhile", hint: `your edit is kept in ${path}` });
		expect(await readFile(path, "utf8")).toBe("changed");
		const plain = await inEditFile("b.yaml", "x", (t) => t, async (file) => {
			await writeFile(file, "changed");
			throw new CliError("refused", 1);
		}).catch((e: unknown) => e);
		expect(plain).toMatchObject({ exitCode: 1, message: "refused", hint: expect.stringMatching(/^your edit is kept in /) });
	});

	it("unchanged, or never written, or failing with what is no refusal, is removed and the error passed on as it was", async () => {
		const cases: [string, (file: string) => Promise<void>][] = [
			["unchanged", async (file) => writeFile(file, "x\n")],
			["never written", async () => {}],
		];
		for (const [what, write] of cases) {
			let path = "";
			const err = await inEditFile("a.yaml", "x", (t) => t.trim(), async (file) => {
				path = file;
				await write(file);
				throw new CliError("the editor exited with status 1; nothing was sent");
			}).catch((e: unknown) => e);
			expect(err, what).toMatchObject({ hint: null });
			expect(existsSync(path), what).toBe(false);
		}
		const bug = new TypeError("x is undefined");
		expect(await inEditFile("a.yaml", "x", (t) => t, async (file) => (await writeFile(file, "changed"), Promise.reject(bug))).catch((e: unknown) => e)).toBe(bug);
	});
});
