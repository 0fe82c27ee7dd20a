import { Readable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { CliError } from "../../cli/client.ts";
import { readStdin, utf8Text, withoutFinalNewline } from "../../cli/stdin.ts";

// stdin as `notepad set <key> -` and a prompt given as `-` read it (cli/stdin.ts): to its end, as
// UTF-8 or refused saying where not, one trailing newline dropped.

const savedStdin = Object.getOwnPropertyDescriptor(process, "stdin")!;
afterEach(() => void Object.defineProperty(process, "stdin", savedStdin));

describe("stdin", () => {
	it("is read to its end, however many pieces it arrives in", async () => {
		Object.defineProperty(process, "stdin", { value: Readable.from([Buffer.from("h"), Buffer.from([0xc3]), Buffer.from([0xa9, 0x0a])]), configurable: true, writable: true });
		expect(await readStdin()).toBe("hé\n");
	});

	it("that is not UTF-8 is refused, exit 1, saying where and how to convert it", async () => {
		Object.defineProperty(process, "stdin", { value: Readable.from([Buffer.from([0x61, 0xe9, 0x62])]), configurable: true, writable: true });
		const err = await readStdin().catch((e: unknown) => e);
		expect(err).toBeInstanceOf(CliError);
		expect(err).toMatchObject({ exitCode: 1, message: expect.stringMatching(/^stdin is not valid UTF-8: /), hint: "save it as UTF-8 (iconv -f latin1 -t utf-8 converts a Latin-1 file)" });
		expect(() => utf8Text(new Uint8Array([0xff, 0xfe, 0x61, 0x00]), "notes.txt")).toThrow("notes.txt is UTF-16, not UTF-8");
	});
});

describe("the one trailing newline", () => {
	it("goes, \\n or \\r\\n, and only one", () => {
		expect(["hi\n", "hi\r\n", "hi\n\n", "hi\r\n\r\n", "hi", "hi\r", "a\nb"].map(withoutFinalNewline)).toEqual(["hi", "hi", "hi\n", "hi\r\n", "hi", "hi\r", "a\nb"]);
	});
});
