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

/**
 * Fakes `target` with a body that sends "first part" and then nothing, ever: a server stalled mid-body.
 * Resolves `reached` once the reader has asked past the first part (the read is then waiting).
 */
export function fakeStallingBody(target: string): { reached: Promise<void> } {
	let stalled = () => {};
	const reached = new Promise<void>((resolve) => (stalled = resolve));
	fake(target, () => {
		let pulls = 0;
		const stream = new ReadableStream<Uint8Array>(
			{
				pull(c) {
					if (++pulls === 1) return c.enqueue(new TextEncoder().encode("first part"));
					stalled();
					return new Promise<void>(() => {});
				},
			},
			{ highWaterMark: 0 },
		);
		return new Response(stream);
	});
	return { reached };
}

export function resetOutbound(): void {
	fakes.length = 0;
	unmocked.length = 0;
	outboundLog.length = 0;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * Answers as fetch does: a redirect a fake answers is followed (to the fakes again, up to fetch's 20)
 * unless the caller asked for `redirect: "manual"`. Without it no test could see a caller that must
 * not follow one (a signed webhook, a gateway given the key) forget to ask.
 */
export async function guardedFetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
	let request = new Request(input, init);
	for (let hops = 0; ; hops++) {
		const url = new URL(request.url);
		outboundLog.push({ method: request.method, url: request.url });
		const found = fakes.find((f) => f.match(url));
		if (!found) {
			unmocked.push(`${request.method} ${request.url}`);
			throw new TypeError(`unmocked outbound request in test: ${request.method} ${request.url}`);
		}
		if (request.redirect !== "follow") return found.handler(request);
		const again = request.clone();
		const response = await found.handler(request);
		const location = response.headers.get("location");
		if (!REDIRECT_STATUSES.has(response.status) || location === null) return response;
		if (hops === 20) throw new TypeError(`too many redirects in test: ${request.url}`);
		const next = new URL(location, request.url);
		// 303, and 301 or 302 after a POST, go on as a GET without the body (WHATWG Fetch, 4.4).
		const asGet = response.status === 303 || (again.method === "POST" && (response.status === 301 || response.status === 302));
		if (!asGet) {
			request = new Request(next, again);
			continue;
		}
		const headers = new Headers(again.headers);
		for (const name of ["content-type", "content-encoding", "content-language", "content-location"]) headers.delete(name);
		request = new Request(next, { method: "GET", headers, signal: again.signal });
	}
}
