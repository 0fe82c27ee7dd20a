/**
 * Outbound HTTP in tests: every fetch made by the Worker, its Durable Objects (they run in this
 * isolate) or the SDK goes through this guard. A test declares the fakes it expects with `fake()`;
 * anything else is refused and recorded, and the setup file fails the test that made it.
 */
export type FakeHandler = (request: Request) => Response | Promise<Response>;

interface Fake {
	match: (url: URL) => boolean;
	handler: FakeHandler;
}

const fakes: Fake[] = [];
export const unmocked: string[] = [];
export const outboundLog: { method: string; url: string }[] = [];

/** Routes requests whose URL's origin (or predicate) matches to `handler` until the test ends. */
export function fake(target: string | ((url: URL) => boolean), handler: FakeHandler): void {
	const match = typeof target === "string" ? (url: URL) => url.origin === new URL(target).origin : target;
	fakes.unshift({ match, handler });
}

export function resetOutbound(): void {
	fakes.length = 0;
	unmocked.length = 0;
	outboundLog.length = 0;
}

export async function guardedFetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
	const request = new Request(input, init);
	const url = new URL(request.url);
	outboundLog.push({ method: request.method, url: request.url });
	const found = fakes.find((f) => f.match(url));
	if (!found) {
		unmocked.push(`${request.method} ${request.url}`);
		throw new TypeError(`unmocked outbound request in test: ${request.method} ${request.url}`);
	}
	return found.handler(request);
}
