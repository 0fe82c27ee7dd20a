// `npm run check`: validates fleet.yaml (or the file given) exactly as the Worker will when it loads.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { costWarnings, modelWarnings, parseFleet } from "../src/config/fleet.ts";
import { ConfigError } from "../src/errors.ts";

const given = process.argv[2];
const file = given ?? path.join(import.meta.dirname, "..", "fleet.yaml");
const name = given ?? "fleet.yaml";

try {
	const fleet = parseFleet(await readFile(file, "utf8"), name);
	const schedules = fleet.agents.reduce((n, agent) => n + Object.keys(agent.schedules).length, 0);
	console.log(`${name}: ${fleet.agents.length} agents, ${schedules} schedules OK`);
	for (const warning of [...modelWarnings(fleet, new Date()), ...costWarnings(fleet)]) console.warn(`warning: ${warning}`);
} catch (error) {
	console.error(error instanceof ConfigError ? error.message : `${name}: ${error instanceof Error ? error.message : String(error)}`);
	process.exitCode = 1;
}
