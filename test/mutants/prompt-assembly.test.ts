// A system prompt of blanks is as good as none: only the contract is sent, as the API refuses a
// blank text block. A mutation walk found it unchecked.
import { describe, expect, it } from "vitest";
import { assemblePrompt, CONTRACT } from "../../src/agent/prompt.ts";

describe("the first request's system blocks", () => {
	it("leave out a system prompt of blanks", () => {
		const { system } = assemblePrompt({ system_prompt: " \n\t " }, { prompt: "Go.", notepad: new Map(), trigger: "manual" });
		expect(system).toEqual([{ type: "text", text: CONTRACT, cache_control: { type: "ephemeral" } }]);
	});
});
