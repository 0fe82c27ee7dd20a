// The ports `npm start` needs, checked before it migrates or starts anything: a second `npm start`
// beside a running one got as far as printing its banner (the first one answered its readiness
// probe) before its emulator found its port taken and stopped it.
import { createServer } from "node:net";

/**
 * Why `port` on `host` cannot be listened on: "EADDRINUSE" when something holds it, another code
 * (EACCES…) for any other refusal, or null when it is free (the test listen is closed at once).
 */
export function portProblem(port, host) {
	return new Promise((resolve) => {
		const server = createServer();
		server.once("error", (err) => resolve(err.code ?? err.message));
		server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(null)));
	});
}

/**
 * The lines saying which ports cannot be had, and what to do.
 * @param {{ port: number, what: string, problem: string }[]} refused  each port refused, `what` it is for, and why
 * @param {number} port  drover's own port, from which another pair is suggested
 * @returns {string[]}
 */
export function portsRefused(refused, port) {
	const lines = refused.map(({ port: p, what, problem }) =>
		problem === "EADDRINUSE"
			? `[drover] port ${p} on 127.0.0.1, ${what}, is already in use: ${p === port ? "is another drover running (npm start, in this checkout or another)?" : "is another drover (npm start) or emulator (npm run emulator) running?"}`
			: `[drover] port ${p} on 127.0.0.1, ${what}, cannot be listened on: ${problem}`,
	);
	const other = port + 10 <= 65534 ? port + 10 : 8797;
	const elsewhere = `npm start -- --port ${other} (its emulator then takes ${other + 1})`;
	lines.push(refused.some((r) => r.problem === "EADDRINUSE") ? `[drover] stop it (Ctrl-C in its terminal), or start this one on other ports: ${elsewhere}` : `[drover] start it on other ports: ${elsewhere}`);
	return lines;
}
