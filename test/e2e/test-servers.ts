import { once } from "node:events";
import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach } from "vitest";

/**
 * The local HTTP servers a test file starts (fake APIs, recording proxies), each closed, open
 * connections too, after the test that started it: a CLI process left holding a keep-alive
 * connection would otherwise keep `close` waiting. Called once, at the file's top level.
 */
export function serversClosedAfterEach(): { servers: Server[]; listen: (handler: RequestListener) => Promise<string> } {
	const servers: Server[] = [];
	afterEach(async () => {
		for (const s of servers.splice(0)) {
			s.closeAllConnections();
			await new Promise((resolve) => s.close(resolve));
		}
	});
	/** A server for `handler` on a free port of 127.0.0.1: its origin. */
	const listen = async (handler: RequestListener): Promise<string> => {
		const server = createServer(handler);
		servers.push(server);
		server.listen(0, "127.0.0.1");
		await once(server, "listening");
		return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	};
	return { servers, listen };
}
