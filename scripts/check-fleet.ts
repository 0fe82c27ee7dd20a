// `npm run check`: validates fleet.yaml (or the file given) exactly as the Worker will when it loads.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { modelWarnings, parseFleetBytes } from "../src/config/fleet.ts";
import { definitionWarnings, scheduleWarnings, sharedWebhookSecrets } from "../src/config/warnings.ts";
import { ConfigError } from "../src/errors.ts";

const given = process.argv[2];
const file = given ?? path.join(import.meta.dirname, "..", "fleet.yaml");
const name = given ?? "fleet.yaml";

try {
	// As bytes, as the Worker bundles it: readFile(file, "utf8") read a Latin-1 file leniently, and it passed.
	const fleet = parseFleetBytes(await readFile(file), name);
	const schedules = fleet.agents.reduce((n, agent) => n + Object.keys(agent.schedules).length, 0);
	console.log(`${name}: ${fleet.agents.length} agents, ${schedules} schedules OK`);
	for (const warning of modelWarnings(fleet, new Date())) console.warn(`warning: ${warning}`);
	// What a dry run says of a definition whatever the Worker's secrets (those are the deployed Worker's to know).
	for (const agent of fleet.agents) for (const warning of [...definitionWarnings(agent), ...scheduleWarnings(agent)]) console.warn(`warning: ${agent.name}: ${warning}`);
	for (const warning of sharedWebhookSecrets(fleet.agents)) console.warn(`warning: ${warning}`);
} catch (error) {
	console.error(error instanceof ConfigError ? error.message : `${name}: ${error instanceof Error ? error.message : String(error)}`);
	// Under `npm start` (wrangler's build step, on each save): reported, and the Worker still reloads,
	// answering 503 with these issues until the file is fixed. Everywhere else the build stops here.
	// Said loudly: left exported in a shell that then deploys, it would ship the file.
	if (process.env.DROVER_DEV_BUILD === "1") {
		console.error("(the local Worker answers 503 with these issues until fleet.yaml is fixed)");
		console.error(
			"drover: DROVER_DEV_BUILD=1 is set, so this build goes on with an invalid fleet.yaml, as npm start needs; anywhere else unset it: a Worker deployed so answers 503 and runs no agent",
		);
	} else process.exitCode = 1;
}
