import { MessagesEmulator, type EmulatorOptions } from "../../emulator/messages-api.ts";
import { fake } from "./outbound.ts";

/**
 * A Messages API emulator answering for https://api.anthropic.com in this test (the Worker's
 * ANTHROPIC_BASE_URL is empty in tests, so the SDK calls the real host, which the guard routes here).
 */
export function useEmulator(options: EmulatorOptions = {}): MessagesEmulator {
	const emulator = new MessagesEmulator(options);
	fake("https://api.anthropic.com", (request) => emulator.handle(request));
	return emulator;
}
