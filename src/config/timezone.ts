import { editDistance } from "../shared/edit-distance.ts";

/**
 * The zone a name refused is a letter or two from ("Europe/Berln"), the closest, or null. Intl's list
 * holds some zones by their older names (Asia/Calcutta, Europe/Kiev) and no UTC: their current ones
 * join it. Asked only of a name refused, and only of one a zone's length: the distance costs the
 * product of the two lengths, and a body may carry a megabyte.
 */
function closestZone(name: string): string | null {
	if (name.length > 64) return null;
	const wanted = name.toLowerCase();
	let best: { zone: string; distance: number } | null = null;
	for (const zone of [...Intl.supportedValuesOf("timeZone"), "UTC", "Asia/Kolkata", "Europe/Kyiv", "America/Nuuk", "Asia/Yangon", "Asia/Ho_Chi_Minh", "Asia/Kathmandu"]) {
		if (Math.abs(zone.length - name.length) > 2) continue;
		const distance = editDistance(zone.toLowerCase(), wanted);
		if (distance <= 2 && (best === null || distance < best.distance)) best = { zone, distance };
	}
	return best?.zone ?? null;
}

/** The shape of an IANA zone name: "UTC", "Europe/Berlin", "America/Argentina/Buenos_Aires", "Etc/GMT+5". */
const IANA_ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/;

export function timezoneProblem(timeZone: string): string | undefined {
	const useIana = 'use an IANA zone such as "Europe/Berlin" or "UTC"';
	let resolved: string;
	try {
		resolved = new Intl.DateTimeFormat(undefined, { timeZone }).resolvedOptions().timeZone;
	} catch {
		const close = closestZone(timeZone);
		return close ? `unknown timezone "${timeZone}" (did you mean "${close}"?)` : `unknown timezone "${timeZone}"; ${useIana}`;
	}
	// Intl also takes a bare UTC offset ("+05:00"), which is no zone: it knows no daylight saving time.
	if (/^[+\u2212-]/.test(timeZone) || /^[+-]/.test(resolved)) {
		return `timezone "${timeZone}" is a UTC offset, not an IANA zone; ${useIana} (a fixed offset is "Etc/GMT-5" for UTC+5)`;
	}
	if (!IANA_ZONE_NAME.test(timeZone)) return `timezone "${timeZone}" is not an IANA zone name; ${useIana}`;
	// Intl takes any case ("europe/berlin", "us/eastern", "utc"): written as its zone is, it reads as one.
	const misspelt = `timezone "${timeZone}" is not spelled as its zone is: write "${resolved}"`;
	if (timeZone.includes("/") && timeZone.split("/").some((segment) => /^[a-z]/.test(segment))) return misspelt;
	if (!timeZone.includes("/") && resolved === "UTC" && timeZone !== "UTC" && timeZone !== "GMT") return misspelt;
	// Intl also takes an abbreviation or a legacy name with no area, and reads it as some zone the
	// operator rarely means: BST as Asia/Dhaka (not London), IST as Kolkata, EST as a UTC−5 with no
	// daylight saving time. Only UTC and GMT are taken bare.
	if (!timeZone.includes("/") && resolved !== "UTC") {
		const meant = MEANT_ZONES[timeZone.toUpperCase()];
		const area = resolved.includes("/") ? ` (Intl reads it as ${resolved})` : "";
		return `timezone "${timeZone}" is an abbreviation or legacy name${area}; write the zone's Area/City name${meant ? `: ${meant}` : ", such as \"Europe/Berlin\""}`;
	}
	return undefined;
}

/** The zones an abbreviation is usually meant for, as its refusal suggests them. */
const MEANT_ZONES: Record<string, string> = {
	BST: '"Europe/London" for British time',
	IST: '"Asia/Kolkata" for India, "Europe/Dublin" for Ireland',
	EST: '"America/New_York" for US Eastern time ("Etc/GMT+5" for a fixed UTC−5)',
	EDT: '"America/New_York" for US Eastern time',
	CST: '"America/Chicago" for US Central time, "Asia/Shanghai" for China',
	CDT: '"America/Chicago" for US Central time',
	MST: '"America/Denver" for US Mountain time, "America/Phoenix" for Arizona',
	MDT: '"America/Denver" for US Mountain time',
	PST: '"America/Los_Angeles" for US Pacific time',
	PDT: '"America/Los_Angeles" for US Pacific time',
	CET: '"Europe/Berlin", "Europe/Paris" or your city',
	CEST: '"Europe/Berlin", "Europe/Paris" or your city',
	JST: '"Asia/Tokyo"',
	AEST: '"Australia/Sydney"',
	AEDT: '"Australia/Sydney"',
};
